import { describe, expect, it } from 'vitest';
import { openState } from '../../../../src/sync/state/index.js';
import { ensureDist } from '../../../helpers/build-dist.js';
import type { E2eDataset } from '../../../helpers/e2e-service.js';
import { createWorkspace, type Workspace } from '../../../helpers/e2e-workspace.js';
import { isUpload, type ProxiedRequest } from '../../../helpers/fault-proxy.js';
import { printFigures } from '../../../helpers/figures.js';
import type { ChildExit } from '../../../helpers/kbsync-child.js';
import { syncKilledAt } from '../../../helpers/kill-run.js';
import { createPrng, type Prng } from '../../../helpers/prng.js';
import { useE2eSuite } from '../../../helpers/e2e-suite.js';

/**
 * `kbsync sync` as a real child process, SIGKILLed again and again at seeded random points (an upload
 * on its way to the service, an upload the service has answered, the free listing a run starts with
 * or reconciles against), then run to the end. What the service charged is then compared with what
 * the files cost: never paid twice, never above a cap.
 */

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });

type KillPoint = 'upload sent' | 'upload answered' | 'listing';
const KILL_POINTS: readonly KillPoint[] = ['upload sent', 'upload answered', 'listing'];
const isListing = (req: ProxiedRequest): boolean => req.method === 'GET' && /\/files\/?(\?|$)/.test(req.url);
const fileNameOf = (req: ProxiedRequest): string | undefined => /filename="([^"]+)"/.exec(req.body.toString('latin1'))?.[1];

type Loop = { kills: Record<KillPoint, number>; runs: number; last: ChildExit };

/**
 * Runs `kbsync sync` as a child, SIGKILLed at a random kill point (the request there is cut off, or
 * its answer lost) while `uploadsLeft()` says uploads remain, then once to its end. A run lists the
 * remote files first whenever an earlier one was killed (its unknown outcomes need it), so the first
 * listing is a kill point every run reaches; the `nth` upload, with nth <= the uploads left, too.
 */
async function killUntilDone(ws: Workspace, rng: Prng, uploadsLeft: () => Promise<number>, maxRuns: number): Promise<Loop> {
  const kills: Record<KillPoint, number> = { 'upload sent': 0, 'upload answered': 0, listing: 0 };
  for (let runs = 1; runs <= maxRuns; runs++) {
    const left = await uploadsLeft();
    const point = left === 0 ? null : (KILL_POINTS[rng.int(0, KILL_POINTS.length - 1)] as KillPoint);
    const nth = point === 'listing' ? 1 : rng.int(1, Math.min(2, left));
    const { exit, killed } = await syncKilledAt(suite.proxy, ws, {
      nth,
      sent: (req) => (point === 'upload sent' && isUpload(req)) || (point === 'listing' && isListing(req)),
      answered: (req) => point === 'upload answered' && isUpload(req),
    });
    if (point === null) return { kills, runs, last: exit };
    // A kill point every run reaches: a run that ended by itself here is a failure of the test's plan.
    expect(killed, `run ${runs}: the kill at ${point} #${nth} never landed (exit ${exit.code}): ${exit.stderr}`).toBe(true);
    expect(exit.signal).toBe('SIGKILL');
    kills[point]++;
  }
  throw new Error(`kbsync was still being killed after ${maxRuns} runs`);
}

function ledgerOf(ws: Workspace): { spent: number; reserved: number } {
  const state = openState(ws.statePath);
  try {
    const { spent, reserved } = state.ledgerTotals().all;
    return { spent, reserved };
  } finally {
    state.close();
  }
}

/** Names of the dataset's files with how many copies each has. */
async function copies(ds: E2eDataset): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const f of await ds.files()) out.set(f.name, (out.get(f.name) ?? 0) + 1);
  return out;
}

/** Upload requests that reached the service, and how many of them repeated an idempotency key already sent. */
function uploadsForwarded(): { sent: number; replays: number } {
  const keys = new Set<string>();
  let sent = 0;
  let replays = 0;
  for (const req of suite.proxy.requests.filter(isUpload)) {
    const key = req.headers['idempotency-key'] ?? '';
    sent++;
    if (keys.has(key)) replays++;
    keys.add(key);
  }
  return { sent, replays };
}

const sumKills = (kills: Record<KillPoint, number>): number => Object.values(kills).reduce((a, b) => a + b, 0);
const describeKills = (kills: Record<KillPoint, number>): string => KILL_POINTS.map((p) => `${kills[p]} at ${p}`).join(' / ');

describe('kbsync SIGKILLed again and again during a sync', () => {
  it('never pays twice: every file is in the dataset once, charged once, however often the run was killed', async () => {
    const seed = 20_250_701;
    const rng = createPrng(seed);
    suite.proxy.setHooks({});
    suite.proxy.requests.length = 0;
    const ds = suite.svc.dataset({ credits: 10_000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { upload: { concurrency: 4, requestsPerSecond: 1000 } },
    });
    const names = Array.from({ length: 24 }, (_, i) => `doc-${String(i).padStart(2, '0')}.md`);
    for (const name of names) ws.write(name, `# ${name}\n\ntext of its own\n`);
    const start = await ds.balance();

    const loop = await killUntilDone(ws, rng, async () => names.length - (await copies(ds)).size, 60);
    const final = await ws.runJson('sync');
    const charged = start - (await ds.balance());
    const remote = await copies(ds);
    const { sent, replays } = uploadsForwarded();
    const duplicateCopies = [...remote.values()].reduce((sum, n) => sum + n - 1, 0);

    expect(loop.last.code, loop.last.stderr).toBe(0);
    expect(sumKills(loop.kills)).toBeGreaterThanOrEqual(5);
    expect(loop.kills['upload answered']).toBeGreaterThan(0);
    expect(final.report.summary).toMatchObject({ uploaded: 0, unchanged: names.length, creditsSpent: 0 });
    expect([...remote.keys()].sort()).toEqual(names);
    expect(duplicateCopies).toBe(0);
    expect(charged).toBe(names.length * 5);
    expect(ledgerOf(ws)).toEqual({ spent: charged, reserved: 0 });
    // The kills did leave uploads whose fate kbsync could not know: some were sent again, with their key.
    expect(new Set(suite.proxy.requests.filter(isUpload).map(fileNameOf)).size).toBe(names.length);
    printFigures('never pay twice under SIGKILL', {
      seed,
      'kills landed': `${sumKills(loop.kills)} (${describeKills(loop.kills)})`,
      'runs to the end': loop.runs,
      'uploads that reached the service': sent,
      'of them sent again with the same key': replays,
      'copies in the dataset': `${remote.size} for ${names.length} files`,
      'credits charged': `${charged} for ${names.length * 5} planned`,
      'duplicate charges': (charged - names.length * 5) / 5 + duplicateCopies,
    });
  }, 180_000);

  it('never spends above a cap: maxCreditsPerDay holds with upload.concurrency 8 and a run killed mid-flight', async () => {
    const seed = 20_250_702;
    const rng = createPrng(seed);
    suite.proxy.setHooks({});
    suite.proxy.requests.length = 0;
    const cap = 37;
    const ds = suite.svc.dataset({ credits: 10_000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: {
        upload: { concurrency: 8, requestsPerSecond: 1000 },
        budget: { maxCreditsPerRun: 10_000, maxCreditsPerDay: cap, maxCreditsPerMonth: 10_000 },
      },
    });
    for (let i = 0; i < 30; i++) ws.write(`doc-${String(i).padStart(2, '0')}.md`, `# doc ${i}\n\ntext of its own\n`);
    const start = await ds.balance();
    const firstDay = new Date().toISOString().slice(0, 10);

    const loop = await killUntilDone(ws, rng, async () => 7 - (await ds.files()).length, 40);
    const final = await ws.runJson('sync');
    const charged = start - (await ds.balance());
    const lastDay = new Date().toISOString().slice(0, 10);
    // A test that runs across midnight UTC meets two days' caps (the budget's day is UTC).
    const days = firstDay === lastDay ? 1 : 2;

    expect(loop.last.code, loop.last.stderr).toBe(3);
    expect(sumKills(loop.kills)).toBeGreaterThanOrEqual(1);
    expect(final.code).toBe(3);
    expect(final.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });
    expect(charged).toBeLessThanOrEqual(cap * days);
    // Every credit the cap allows was used (7 files of 5), so the cap, not a lull, stopped the spending.
    if (days === 1) expect(charged).toBe(35);
    expect(ledgerOf(ws)).toEqual({ spent: charged, reserved: 0 });
    expect((await ds.files()).length).toBe(charged / 5);
    printFigures('spend never above a cap under SIGKILL', {
      seed,
      'kills landed': `${sumKills(loop.kills)} (${describeKills(loop.kills)})`,
      'runs to the end': loop.runs,
      'upload concurrency': 8,
      'uploads that reached the service': uploadsForwarded().sent,
      'credits charged': charged,
      maxCreditsPerDay: cap,
      'reserved left': ledgerOf(ws).reserved,
    });
  }, 180_000);
});
