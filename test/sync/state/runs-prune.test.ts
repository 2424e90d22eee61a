import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/sync/state/index.js';
import { RUNS_KEPT } from '../../../src/sync/state/retention.js';
import { FAST_TMP, fakeClock, tempState, uploadOp, type FakeClock } from './fixtures/state-dir.js';

const CAPS = { run: 1e9, day: 1e9, month: 1e9 };
const FINISHED = ['done', 'stopped', 'failed'] as const;
// About what run-sync.ts writes for a quiet cycle.
const SUMMARY = { totals: { uploaded: 0, reprocessed: 0, failed: 0, unchanged: 1234, credits: 0 }, stop: null };

/** Starts and finishes `n` runs a second apart; returns their ids. */
function cycles(store: StateStore, clock: FakeClock, n: number, command = 'sync'): number[] {
  return Array.from({ length: n }, (_, i) => {
    const id = store.startRun(command);
    clock.advance(1000);
    store.finishRun(id, FINISHED[i % FINISHED.length] ?? 'done', SUMMARY);
    return id;
  });
}

const kept = (store: StateStore, ids: readonly number[]): number[] => ids.filter((id) => store.getRun(id) !== null);

describe('pruning finished runs', () => {
  let t: ReturnType<typeof tempState>;
  let clock: FakeClock;
  let store: StateStore;
  beforeEach(() => {
    t = tempState(FAST_TMP);
    clock = fakeClock('2025-03-14T12:00:00.000Z');
    store = t.open({ now: clock.now });
  });
  afterEach(() => t.cleanup());

  it(`keeps only the newest ${RUNS_KEPT} finished runs, interrupted ones included`, () => {
    const crashed = store.startRun('sync');
    store.close();
    store = t.open({ now: clock.now });
    const plan = cycles(store, clock, 1, 'plan');

    const ids = cycles(store, clock, RUNS_KEPT + 50);

    expect(store.getRun(crashed)).toBeNull();
    expect(store.getRun(plan[0] ?? -1)).toBeNull();
    expect(kept(store, ids)).toEqual(ids.slice(-RUNS_KEPT));
    const newest = ids.at(-1) ?? -1;
    expect(store.lastRun()).toEqual({
      id: newest,
      command: 'sync',
      status: FINISHED[(ids.length - 1) % FINISHED.length],
      startedAt: '2025-03-14T12:09:10.000Z',
      finishedAt: '2025-03-14T12:09:11.000Z',
      summary: SUMMARY,
    });
    expect(store.lastRun('sync')?.id).toBe(newest);
    expect(store.lastRun('plan')).toBeNull();
  });

  it('never deletes a running run, even in a full sweep', () => {
    const running = store.startRun('sync');

    const ids = cycles(store, clock, RUNS_KEPT + 50);

    expect(ids.some((id) => id % RUNS_KEPT === 0)).toBe(true);
    expect(store.getRun(running)?.status).toBe('running');
    expect(kept(store, ids)).toEqual(ids.slice(-RUNS_KEPT));
    expect(() => store.finishRun(running, 'done', null)).not.toThrow();
  });

  it('keeps runs the ledger or the outbox refers to, and the ledger totals with them', () => {
    const paid = store.startRun('sync');
    const done = store.enqueue({ ...uploadOp('a.md', 5), runId: paid });
    store.reserve(done, CAPS, paid);
    store.settle(done, { outcome: 'done', creditsCharged: 4, remoteId: 'r1' });
    store.finishRun(paid, 'done', SUMMARY);
    const failing = store.startRun('sync');
    const refused = store.enqueue({ ...uploadOp('b.md', 3), runId: failing });
    store.reserve(refused, CAPS, failing);
    store.settle(refused, { outcome: 'failed', code: 'http_422', error: 'refused' });
    store.finishRun(failing, 'done', SUMMARY);
    const planned = store.startRun('sync');
    const pending = store.enqueue({ ...uploadOp('c.md', 2), runId: planned });
    store.finishRun(planned, 'stopped', SUMMARY);
    const totals = store.ledgerTotals();

    const ids = cycles(store, clock, RUNS_KEPT + 50);

    expect(store.getOp(done)).toBeNull();
    expect(store.getRun(paid)?.status).toBe('done');
    expect(store.getRun(failing)?.status).toBe('done');
    expect(store.getRun(planned)?.status).toBe('stopped');
    expect(kept(store, ids)).toEqual(ids.slice(-RUNS_KEPT));
    expect(store.ledgerTotals()).toEqual(totals);
    expect(totals.all).toMatchObject({ reserve: 8, release: 3, spend: 4, reserved: 0 });
    expect(store.verifyTotals()).toEqual([]);
    expect(store.getOp(pending)?.runId).toBe(planned);
  });

  it('deletes a run at the latest in the next full sweep once its pending op was reserved under another run', () => {
    const planned = store.startRun('sync');
    const op = store.enqueue({ ...uploadOp('c.md', 2), runId: planned });
    store.finishRun(planned, 'stopped', SUMMARY);
    cycles(store, clock, 2 * RUNS_KEPT + 50);
    expect(store.getRun(planned)).not.toBeNull();
    const later = store.startRun('sync');
    store.reserve(op, CAPS, later);
    store.settle(op, { outcome: 'done', creditsCharged: 2, remoteId: 'r2' });
    store.finishRun(later, 'done', SUMMARY);

    const ids = cycles(store, clock, RUNS_KEPT - (later % RUNS_KEPT));

    expect((ids.at(-1) ?? -1) % RUNS_KEPT).toBe(0);
    expect(store.getRun(planned)).toBeNull();
    expect(store.getRun(later)?.status).toBe('done');
    expect(kept(store, ids)).toEqual(ids);
    expect(store.verifyTotals()).toEqual([]);
  });

  it('does not grow the state file across 2,000 more runs', () => {
    cycles(store, clock, RUNS_KEPT + 10);
    const before = store.diagnostics();

    const ids = cycles(store, clock, 2000);

    const after = store.diagnostics();
    expect(kept(store, ids)).toHaveLength(RUNS_KEPT);
    // Unpruned, these 2,000 rows take ~60 more pages of 4 KiB; a shifting window reuses its pages.
    expect(after.pageCount).toBeLessThanOrEqual(before.pageCount + 2);
    expect(after.freePages).toBe(0);
  });
});
