import { afterEach, describe, expect, it } from 'vitest';
import type { BudgetCaps, StateStore } from '../../../src/sync/state/index.js';
import { printFigures } from '../../helpers/figures.js';
import { seededRandom } from './fixtures/realistic.js';
import { FAST_TMP, fakeClock, tempState, uploadOp } from './fixtures/state-dir.js';

/*
 * Property: whatever the interleaving of 8 workers doing enqueue → reserve → settle (done with a charge
 * ≤ planned | failed | unknown) → resolveUnknown, across runs, UTC days and months, the store admits an op
 * exactly when a simple model says it fits, and spent + reserved never exceeds a cap in any period.
 */

type Sums = { reserved: number; spent: number };
type Worker = { op: number | null; phase: 'idle' | 'pending' | 'in_flight' | 'unknown'; credits: number; keys: string[] };

const dayKey = (d: Date): string => `day:${d.toISOString().slice(0, 10)}`;
const monthKey = (d: Date): string => `month:${d.toISOString().slice(0, 7)}`;

function runSequence(
  store: StateStore,
  seed: number,
  steps: number,
  clock: ReturnType<typeof fakeClock>,
): { caps: BudgetCaps; spentOps: number; maxUsedRatio: number } {
  const rnd = seededRandom(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
  const caps: BudgetCaps = { run: int(10, 60), day: int(20, 90), month: int(40, 160) };
  const model = new Map<string, Sums>();
  const sums = (k: string): Sums => model.get(k) ?? { reserved: 0, spent: 0 };
  const add = (k: string, reserved: number, spent: number): void => {
    const s = sums(k);
    model.set(k, { reserved: s.reserved + reserved, spent: s.spent + spent });
  };
  const capOf = (k: string): number => (k.startsWith('run:') ? caps.run : k.startsWith('day:') ? caps.day : caps.month);
  let run = store.startRun('sync');
  const workers: Worker[] = Array.from({ length: 8 }, () => ({ op: null, phase: 'idle', credits: 0, keys: [] }));
  let n = 0;
  let spentOps = 0;
  let maxUsedRatio = 0;

  for (let step = 0; step < steps; step++) {
    clock.advance(int(0, 45) * 60_000);
    if (rnd() < 0.03) {
      store.finishRun(run, 'done', { step });
      run = store.startRun('sync');
    }
    const w = workers[int(0, workers.length - 1)] as Worker;
    const ctx = `seed ${seed} step ${step}`;
    switch (w.phase) {
      case 'idle': {
        w.credits = int(0, 12);
        w.op = store.enqueue(uploadOp(`w/${n++}.md`, w.credits, (n % 256).toString(16).padStart(2, '0').repeat(32)));
        w.phase = 'pending';
        break;
      }
      case 'pending': {
        const now = clock.now();
        const keys = [`run:${run}`, dayKey(now), monthKey(now)];
        const fits = keys.every((k) => sums(k).reserved + sums(k).spent + w.credits <= capOf(k));
        const result = store.reserve(w.op as number, caps, run);
        expect(result.ok, ctx).toBe(fits);
        if (result.ok) {
          for (const k of keys) add(k, w.credits, 0);
          w.keys = keys;
          w.phase = 'in_flight';
        } else if (rnd() < 0.3) {
          store.cancelOp(w.op as number);
          w.phase = 'idle';
        }
        break;
      }
      case 'in_flight': {
        const roll = rnd();
        if (roll < 0.5) {
          const charged = int(0, w.credits);
          store.settle(w.op as number, { outcome: 'done', creditsCharged: charged, remoteId: `r${w.op}` });
          for (const k of w.keys) add(k, -w.credits, charged);
          spentOps++;
          w.phase = 'idle';
        } else if (roll < 0.75) {
          store.settle(w.op as number, { outcome: 'failed', code: 'internal', error: 'boom' });
          for (const k of w.keys) add(k, -w.credits, 0);
          w.phase = 'idle';
        } else {
          store.settle(w.op as number, { outcome: 'unknown', code: 'timeout', error: 'lost' });
          w.phase = 'unknown';
        }
        break;
      }
      case 'unknown': {
        if (rnd() < 0.5) {
          store.resolveUnknown(w.op as number, { remoteId: `r${w.op}`, status: 'queued' });
          for (const k of w.keys) add(k, -w.credits, w.credits);
          spentOps++;
          w.phase = 'idle';
        } else {
          store.resolveUnknown(w.op as number, null);
          for (const k of w.keys) add(k, -w.credits, 0);
          w.phase = 'pending';
        }
        break;
      }
    }
    // The invariant, in every period the model has seen, against the store's own running totals.
    for (const [k, s] of model) {
      expect(s.reserved + s.spent, `${ctx} ${k}`).toBeLessThanOrEqual(capOf(k));
      maxUsedRatio = Math.max(maxUsedRatio, (s.reserved + s.spent) / Math.max(1, capOf(k)));
    }
    const used = store.creditsUsed(run);
    const now = clock.now();
    expect([used.run, used.day, used.month], ctx).toEqual(
      [`run:${run}`, dayKey(now), monthKey(now)].map((k) => sums(k).reserved + sums(k).spent),
    );
  }
  return { caps, spentOps, maxUsedRatio };
}

describe('reserve/settle under random interleavings', () => {
  let t: ReturnType<typeof tempState> | undefined;
  afterEach(() => t?.cleanup());

  it('never lets spent + reserved pass a cap, never double-spends, and the ledger agrees (40 seeds × 8 workers)', () => {
    let totalSpentOps = 0;
    let maxRatio = 0;
    let mismatches = 0;
    for (let seed = 1; seed <= 40; seed++) {
      t = tempState(FAST_TMP);
      const clock = fakeClock('2025-01-30T20:00:00.000Z');
      const store = t.open({ now: clock.now });

      const { caps, spentOps, maxUsedRatio } = runSequence(store, seed, 250, clock);

      // The append-only ledger, re-summed on its own, tells the same story.
      const problems = store.verifyTotals();
      mismatches += problems.length;
      expect(problems, `seed ${seed}`).toEqual([]);
      const ledger = store.ledgerTotals();
      const periods: [string, { reserved: number; spent: number }, number][] = [
        ...[...ledger.byRun].map(([k, v]) => [`run ${k}`, v, caps.run] as [string, typeof v, number]),
        ...[...ledger.byDay].map(([k, v]) => [k, v, caps.day] as [string, typeof v, number]),
        ...[...ledger.byMonth].map(([k, v]) => [k, v, caps.month] as [string, typeof v, number]),
      ];
      for (const [period, sums, cap] of periods) expect(sums.reserved + sums.spent, `seed ${seed} ${period}`).toBeLessThanOrEqual(cap);
      totalSpentOps += spentOps;
      maxRatio = Math.max(maxRatio, maxUsedRatio);
      t.cleanup();
      t = undefined;
    }
    // The sequences must actually press against the caps, or the property proves nothing.
    expect(maxRatio).toBe(1);
    expect(totalSpentOps).toBeGreaterThan(500);
    printFigures('reserve/settle under random interleavings', {
      seeds: 40,
      'steps each': 250,
      workers: 8,
      'ops spent': totalSpentOps,
      'largest (spent + reserved) / cap': maxRatio,
      'ledger mismatches': mismatches,
    });
  });
});
