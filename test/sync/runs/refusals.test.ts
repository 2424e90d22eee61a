import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, runKbsync, type Workspace } from '../../helpers/e2e-workspace.js';
import { isUpload, type ProxiedRequest } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

/**
 * Refusals from the service (docs/api.md: treat 402 and 429 as "stop spending", honour Retry-After),
 * as a real `kbsync sync` meets them: the local service behind the fault proxy, which answers 429 to some
 * uploads and records when each request arrived; and the embedded target out of credits.
 */

const suite = useE2eSuite({ proxy: true });

const COST = 5;
const contentOf = (name: string): string => `# ${name}\n\ntext of its own: ${name}\n`;
const nameOf = (req: ProxiedRequest): string => /filename="([^"]+)"/.exec(req.body.toString('latin1'))?.[1] ?? '?';
const refusal = (seconds: number) =>
  ({
    kind: 'respond',
    status: 429,
    headers: { 'retry-after': String(seconds) },
    json: { error: { code: 'rate_limited', message: 'slow down' } },
  }) as const;

/**
 * Slack after a 429 for requests already on their way: kbsync may have sent an upload after the proxy
 * wrote the 429 and before kbsync read it (one turn of the event loop, which a SQLite commit with
 * synchronous=FULL on a busy disk can stretch to tens of ms; the proxy, the service and kbsync share one
 * process here). 250 ms is wide of that, as in upload-queue.test.ts, and far below what the old queue
 * did: at 5 uploads a second it kept sending all through the window.
 */
const IN_FLIGHT_SLACK_MS = 250;

function setup(count: number, upload: Record<string, unknown>): { ds: E2eDataset; ws: Workspace; names: string[] } {
  suite.proxy.setHooks({});
  suite.proxy.requests.length = 0;
  const ds = suite.svc.dataset({ credits: 10_000 });
  const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.proxy.url, apiKey: ds.apiKey, config: { upload } });
  const names = Array.from({ length: count }, (_, i) => `doc-${String(i).padStart(2, '0')}.md`);
  for (const name of names) ws.write(name, contentOf(name));
  return { ds, ws, names };
}

/** The state after the run: the ledger re-sums, nothing reserved or in flight, and what it spent in all. */
function ledgerOf(ws: Workspace): { problems: string[]; reserved: number; spent: number; inFlight: number } {
  const state = openState(ws.statePath);
  try {
    const { reserved, spent } = state.ledgerTotals().all;
    return { problems: state.verifyTotals(), reserved, spent, inFlight: state.inFlightOps().length };
  } finally {
    state.close();
  }
}

describe('a 429 pauses every upload until its Retry-After has passed', () => {
  it('every 5th upload answered 429 Retry-After 2: no upload starts inside a window but those already on the wire; each refused file is sent again after it, and everything is charged once', async () => {
    const concurrency = 4;
    const { ds, ws, names } = setup(9, { concurrency, requestsPerSecond: 5 });
    const uploads: { name: string; atMs: number; refused: boolean }[] = [];
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (!isUpload(req)) return { kind: 'forward' };
        const refused = (uploads.length + 1) % 5 === 0;
        uploads.push({ name: nameOf(req), atMs: req.receivedAtMs, refused });
        if (!refused) return { kind: 'forward' };
        // The window starts when the 429 is written, right after this returns.
        uploads[uploads.length - 1] = { name: nameOf(req), atMs: performance.now(), refused };
        return refusal(2);
      },
    });
    const before = await ds.balance();

    const run = await ws.runJson('sync');

    const t0 = uploads[0]?.atMs ?? 0;
    const timeline = uploads.map((u) => `${u.refused ? '429 ' : ''}${u.name}@${Math.round(u.atMs - t0)}`).join(', ');
    const windows = uploads.filter((u) => u.refused);
    expect(windows, timeline).toHaveLength(2);
    for (const w of windows) {
      const inside = uploads.filter((u) => u.atMs > w.atMs && u.atMs < w.atMs + 2_000);
      for (const u of inside) {
        expect(u.atMs - w.atMs, `${u.name} started ${Math.round(u.atMs - w.atMs)} ms after a 429 (uploads: ${timeline})`).toBeLessThan(
          IN_FLIGHT_SLACK_MS,
        );
      }
      expect(inside.length, timeline).toBeLessThanOrEqual(concurrency - 1);
      // The refused file goes again, after its window.
      const again = uploads.find((u) => u.name === w.name && u.atMs > w.atMs);
      expect(again, timeline).toBeDefined();
      expect((again as { atMs: number }).atMs - w.atMs, timeline).toBeGreaterThanOrEqual(2_000);
    }
    expect(run.code, run.stderr).toBe(0);
    expect(run.report.summary).toMatchObject({ uploaded: 9, failed: 0, deferred: 0, creditsSpent: 9 * COST });
    expect(
      uploads
        .filter((u) => !u.refused)
        .map((u) => u.name)
        .sort(),
    ).toEqual(names);
    expect(before - (await ds.balance())).toBe(9 * COST);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(names);
    expect(ledgerOf(ws)).toEqual({ problems: [], reserved: 0, spent: 9 * COST, inFlight: 0 });
  });

  it('a Retry-After above upload.maxRetryAfterSeconds stops the run with exit 3: no further upload is sent, the rest is deferred, and the next run sends it, each file charged once', async () => {
    const concurrency = 2;
    const { ds, ws, names } = setup(6, { concurrency, requestsPerSecond: 1000, maxRetryAfterSeconds: 60 });
    const arrivals: { name: string; atMs: number }[] = [];
    let refusedAt: { name: string; atMs: number } | null = null;
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (!isUpload(req)) return { kind: 'forward' };
        arrivals.push({ name: nameOf(req), atMs: req.receivedAtMs });
        if (arrivals.length !== 3) return { kind: 'forward' };
        refusedAt = { name: nameOf(req), atMs: performance.now() };
        return refusal(3600);
      },
    });
    const before = await ds.balance();

    const first = await ws.runJson('sync');

    const refused = refusedAt as { name: string; atMs: number } | null;
    expect(refused).not.toBeNull();
    const { name: refusedName, atMs } = refused as { name: string; atMs: number };
    const after = arrivals.filter((a) => a.atMs > atMs);
    for (const a of after) expect(a.atMs - atMs, `${a.name} sent after the 429`).toBeLessThan(IN_FLIGHT_SLACK_MS);
    expect(after.length).toBeLessThanOrEqual(concurrency - 1);
    const sentFirst = arrivals.length - 1;
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toMatch(/3600 s \(429 Retry-After\), longer than upload\.maxRetryAfterSeconds \(60 s\)/);
    expect(first.report.summary).toMatchObject({ uploaded: sentFirst, failed: 0, deferred: 6 - sentFirst, creditsSpent: sentFirst * COST });
    expect(itemOf(first.report, refusedName)).toMatchObject({
      outcome: 'not-run',
      reason: expect.stringMatching(/refused by the service \(rate_limited\), nothing charged/),
    });
    expect(ledgerOf(ws)).toMatchObject({ problems: [], reserved: 0, spent: sentFirst * COST, inFlight: 0 });

    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');

    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.report.summary).toMatchObject({ uploaded: 6 - sentFirst, failed: 0, deferred: 0, creditsSpent: (6 - sentFirst) * COST });
    expect(before - (await ds.balance())).toBe(6 * COST);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(names);
    expect(ledgerOf(ws)).toEqual({ problems: [], reserved: 0, spent: 6 * COST, inFlight: 0 });
  });
});

/** Splits a command line printed for a POSIX shell (words, single quotes). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replaceAll(`'\\''`, "'") : (m[2] as string),
  );
}

describe('the embedded target out of credits', () => {
  it('target.startCredits sets the first balance; a 402 defers the files not sent (exit 4) and names the command that adds the credits they need; that command works, and the next sync sends them', async () => {
    const ws = createWorkspace(suite.temp.make(), { baseUrl: 'http://unused.invalid', apiKey: 'unused' });
    ws.configure({
      target: { kind: 'embedded', plan: 'basic', dataDir: '.kbsync/service', startCredits: 12 },
      upload: { concurrency: 4, requestsPerSecond: 1000 },
    });
    const names = ['a.md', 'b.md', 'c.md', 'd.md'];
    for (const name of names) ws.write(name, contentOf(name));

    const first = await ws.runJson('sync');

    expect(first.code, first.stderr).toBe(4);
    expect(first.report.summary).toMatchObject({ uploaded: 2, failed: 0, deferred: 2, creditsSpent: 2 * COST });
    const left = first.report.items
      .filter((i) => i.outcome === 'not-run')
      .map((i) => i.path)
      .sort();
    expect(left).toHaveLength(2);
    for (const path of left) expect(itemOf(first.report, path).reason).toMatch(/insufficient_credits/);
    expect(first.stderr).toContain('the dataset has 2 credits; the 2 files left (deferred, not failed) need 10 credits');
    const dataDir = `${ws.root}/.kbsync/service`;
    const command = /^ {2}(kbsync serve credits add .*)$/m.exec(first.stderr)?.[1];
    expect(command, first.stderr).toBe(`kbsync serve credits add --data ${dataDir} --dataset 1 8`);
    expect(ledgerOf(ws)).toMatchObject({ problems: [], reserved: 0, spent: 2 * COST, inFlight: 0 });

    // Run from another folder, as a user would: the command must name the data folder itself.
    const topUp = await runKbsync([...shellWords(command as string).slice(1), '--json'], suite.temp.make());
    expect(topUp.code, topUp.stderr).toBe(0);
    expect(JSON.parse(topUp.stdout)).toEqual({ datasetId: '1', credits: 10 });

    const second = await ws.runJson('sync');

    expect(second.code, second.stderr).toBe(0);
    expect(second.report.summary).toMatchObject({ uploaded: 2, failed: 0, deferred: 0, creditsSpent: 2 * COST });
    expect(
      second.report.items
        .filter((i) => i.action === 'upload')
        .map((i) => i.path)
        .sort(),
    ).toEqual(left);
    expect(ledgerOf(ws)).toEqual({ problems: [], reserved: 0, spent: 4 * COST, inFlight: 0 });
  });
});
