import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeForRun } from '../../../src/cli/exit.js';
import { createClient, type KnowledgeClient } from '../../../src/client/index.js';
import { loadConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { MIB, uploadCost } from '../../../src/shared/plans.js';
import { runSync, type SyncRun } from '../../../src/sync/executor/index.js';
import { openState } from '../../../src/sync/state/index.js';
import type { RunItem } from '../../../src/sync/types.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { printFigures } from '../../helpers/figures.js';
import { createPrng } from '../../helpers/prng.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();

type Caps = { maxCreditsPerRun: number; maxCreditsPerDay: number; maxCreditsPerMonth: number };
const DAY_MS = 86_400_000;

/**
 * Runs the executor directly (not main()) so the clock is ours: budget days and months pass between
 * runs without waiting, and a run near midnight UTC cannot straddle two days.
 */
async function syncAt(ws: Workspace, client: KnowledgeClient, caps: Caps, nowMs: number): Promise<{ run: SyncRun; ledgerSpent: number }> {
  ws.configure({ budget: caps });
  const now = (): Date => new Date(nowMs);
  const state = openState(ws.statePath, { now });
  try {
    const config = loadConfig(ws.configPath, {});
    const run = await runSync({ config, state, getClient: async () => client, logger: silentLogger(), now });
    return { run, ledgerSpent: state.ledgerTotals().byRun.get(run.runId)?.spent ?? 0 };
  } finally {
    state.close();
  }
}

/** A unique file of `size` bytes; big ones are NUL bytes in a .txt, which the service fails fast (processing is not under test). */
function contentOf(index: number, size: number): Buffer {
  const tag = Buffer.from(`file ${index}\n`);
  if (size <= 5 * MIB) return Buffer.concat([tag, Buffer.alloc(Math.max(0, size - tag.length), 'lorem ipsum ')]);
  // Text all through: the service processes it (a body of NULs fails processing, and a later sync reprocesses it).
  const body = Buffer.alloc(size, 'lorem ipsum ');
  tag.copy(body, size - tag.length);
  return body;
}

/** An item's planned cost: credits when admitted, `cost` when deferred. */
const costOfItem = (i: RunItem): number => (i.action === 'defer:over-budget' ? (i.cost ?? NaN) : i.credits);
/** Admission order: smallest cost first, then path. */
const before = (a: RunItem, b: RunItem): boolean => costOfItem(a) < costOfItem(b) || (costOfItem(a) === costOfItem(b) && a.path < b.path);
const isDone = (i: RunItem): boolean => i.action === 'upload' && i.outcome === 'done';
const isWaiting = (i: RunItem): boolean => i.action === 'defer:over-budget' || (i.action === 'upload' && i.outcome === 'not-run');

describe('budget caps with upload.concurrency 8', () => {
  it('never lets the service charge more than any cap, over 15 randomised runs, and uploads deferred work smallest first', async () => {
    const seed = 20_250_611;
    const rng = createPrng(seed);
    const ds: E2eDataset = suite.svc.dataset({ credits: 100_000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { upload: { concurrency: 8, requestsPerSecond: 1000 } },
    });
    const client = createClient({ baseUrl: suite.svc.url, apiKey: ds.apiKey });
    let nowMs = Date.UTC(2031, 2, 10, 12);
    const spentByDay = new Map<string, number>();
    const spentByMonth = new Map<string, number>();
    const sizes = new Map<string, number>();
    let fileIndex = 0;
    let runsWithDeferred = 0;
    let runsMixed = 0;
    // The largest share of a cap any run, day or month used (1: a cap met exactly).
    let maxShareOfCap = 0;
    let totalCharged = 0;

    try {
      for (let runNo = 0; runNo < 15; runNo++) {
        const context = `seed ${seed}, run ${runNo}`;
        for (let k = rng.int(1, 6); k > 0; k--) {
          const size = rng.chance(0.25) ? 5 * MIB + rng.int(1, 3 * MIB) : rng.int(20, 4000);
          const path = `f${String(fileIndex).padStart(3, '0')}.${size > 5 * MIB ? 'txt' : 'md'}`;
          ws.write(path, contentOf(fileIndex++, size));
          sizes.set(path, size);
        }
        if (rng.chance(0.3)) nowMs += DAY_MS;
        if (rng.chance(0.1)) nowMs += 31 * DAY_MS;
        const caps: Caps = { maxCreditsPerRun: rng.int(0, 40), maxCreditsPerDay: rng.int(10, 70), maxCreditsPerMonth: rng.int(60, 220) };
        const day = new Date(nowMs).toISOString().slice(0, 10);
        const month = day.slice(0, 7);
        const balanceBefore = await ds.balance();

        const { run, ledgerSpent } = await syncAt(ws, client, caps, nowMs);
        const charged = balanceBefore - (await ds.balance());

        spentByDay.set(day, (spentByDay.get(day) ?? 0) + charged);
        spentByMonth.set(month, (spentByMonth.get(month) ?? 0) + charged);
        expect(charged, context).toBe(run.totals.creditsSpent);
        expect(charged, context).toBe(ledgerSpent);
        expect(charged, context).toBeLessThanOrEqual(caps.maxCreditsPerRun);
        if (charged > 0) {
          expect(spentByDay.get(day), context).toBeLessThanOrEqual(caps.maxCreditsPerDay);
          expect(spentByMonth.get(month), context).toBeLessThanOrEqual(caps.maxCreditsPerMonth);
        }
        expect(run.stop, context).toBeNull();
        expect(
          run.items.filter((i) => i.outcome === 'failed'),
          context,
        ).toEqual([]);
        const done = run.items.filter(isDone);
        const waiting = run.items.filter(isWaiting);
        for (const item of done) expect(item.creditsCharged, `${context}: ${item.path}`).toBe(uploadCost(sizes.get(item.path) ?? NaN));
        for (const item of run.items.filter((i) => i.action === 'defer:over-budget')) {
          expect(item.credits, context).toBe(0);
          expect(item.reason, context).toMatch(/would exceed maxCreditsPer(Run|Day|Month)/);
        }
        expect(exitCodeForRun(run.totals), context).toBe(waiting.length > 0 ? EXIT.stopped : EXIT.ok);
        // Smallest first: everything uploaded comes before everything left waiting in admission order...
        for (const d of done) for (const w of waiting) expect(before(d, w), `${context}: ${d.path} uploaded before ${w.path}`).toBe(true);
        // ...and the first one left waiting truly did not fit some cap.
        const first = waiting.sort((a, b) => (before(a, b) ? -1 : 1))[0];
        if (first !== undefined) {
          const cost = costOfItem(first);
          const fits =
            charged + cost <= caps.maxCreditsPerRun &&
            (spentByDay.get(day) ?? 0) + cost <= caps.maxCreditsPerDay &&
            (spentByMonth.get(month) ?? 0) + cost <= caps.maxCreditsPerMonth;
          expect(fits, `${context}: ${first.path} (${cost} credits) was deferred although it fits`).toBe(false);
        }
        totalCharged += charged;
        // (A day's or month's earlier spending may pass a cap lowered since: only a run that spends must fit it.)
        if (charged > 0) {
          maxShareOfCap = Math.max(
            maxShareOfCap,
            charged / caps.maxCreditsPerRun,
            (spentByDay.get(day) ?? 0) / caps.maxCreditsPerDay,
            (spentByMonth.get(month) ?? 0) / caps.maxCreditsPerMonth,
          );
        }
        if (waiting.length > 0) runsWithDeferred++;
        if (waiting.length > 0 && done.length > 0) runsMixed++;
      }
      expect(runsWithDeferred).toBeGreaterThan(3);
      expect(runsMixed).toBeGreaterThan(1);

      // A cap that admits exactly the three cheapest waiting files: those three go, smallest first.
      nowMs += 62 * DAY_MS;
      const remote = new Set((await ds.files()).map((f) => f.name));
      const waitingNow = [...sizes]
        .filter(([p]) => !remote.has(p))
        .map(([p, s]) => ({ path: p, cost: uploadCost(s) }))
        .sort((a, b) => a.cost - b.cost || (a.path < b.path ? -1 : 1));
      expect(waitingNow.length).toBeGreaterThan(3);
      const threeCheapest = waitingNow.slice(0, 3);
      const cap = threeCheapest.reduce((s, f) => s + f.cost, 0);
      const partial = await syncAt(ws, client, { maxCreditsPerRun: cap, maxCreditsPerDay: 10_000, maxCreditsPerMonth: 10_000 }, nowMs);
      expect(
        partial.run.items
          .filter(isDone)
          .map((i) => i.path)
          .sort(),
      ).toEqual(threeCheapest.map((f) => f.path).sort());
      expect(partial.run.totals.creditsSpent).toBe(cap);

      // A higher cap: everything left is uploaded; every file is in the dataset exactly once, paid once.
      const balanceBefore = await ds.balance();
      const rest = await syncAt(ws, client, { maxCreditsPerRun: 10_000, maxCreditsPerDay: 10_000, maxCreditsPerMonth: 10_000 }, nowMs);
      const names = (await ds.files()).map((f) => f.name).sort();

      expect(exitCodeForRun(rest.run.totals)).toBe(EXIT.ok);
      expect(
        rest.run.items
          .filter(isDone)
          .map((i) => i.path)
          .sort(),
      ).toEqual(
        waitingNow
          .slice(3)
          .map((f) => f.path)
          .sort(),
      );
      expect(balanceBefore - (await ds.balance())).toBe(waitingNow.slice(3).reduce((s, f) => s + f.cost, 0));
      expect(names).toEqual([...sizes.keys()].sort());
      expect(100_000 - (await ds.balance())).toBe([...sizes.values()].reduce((s, size) => s + uploadCost(size), 0));
      printFigures('budget caps with upload.concurrency 8', {
        seed,
        'capped runs': 15,
        'runs that deferred work': runsWithDeferred,
        'credits charged in them': totalCharged,
        'largest share of a run, day or month cap used': maxShareOfCap.toFixed(2),
      });
    } finally {
      await client.close();
    }
  }, 60_000);
});
