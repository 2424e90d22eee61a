import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../src/shared/errors.js';
import type { BudgetCaps, BudgetPeriod, StateStore } from '../../../src/sync/state/index.js';
import { fakeClock, tempState, uploadOp, type FakeClock } from './fixtures/state-dir.js';

const BIG = 1_000_000;

function conflict(fn: () => unknown): boolean {
  try {
    fn();
  } catch (err) {
    return isKbsyncError(err, 'state_conflict');
  }
  return false;
}

describe('budget', () => {
  let t: ReturnType<typeof tempState>;
  let store: StateStore;
  let clock: FakeClock;
  let run: number;
  beforeEach(() => {
    t = tempState();
    clock = fakeClock('2025-03-14T12:00:00.000Z');
    store = t.open({ now: clock.now });
    run = store.startRun('sync');
  });
  afterEach(() => {
    expect(store.verifyTotals()).toEqual([]);
    t.cleanup();
  });

  const reserveNew = (path: string, credits: number, caps: BudgetCaps, runId = run) => {
    const id = store.enqueue(uploadOp(path, credits, undefined));
    return { id, result: store.reserve(id, caps, runId) };
  };

  it.each<BudgetPeriod>(['run', 'day', 'month'])('admits exactly up to the %s cap and refuses past it', (period) => {
    const caps = { run: BIG, day: BIG, month: BIG, [period]: 12 };

    const admitted = [reserveNew('a.md', 5, caps), reserveNew('b.md', 5, caps), reserveNew('c.md', 2, caps)];
    const refused = reserveNew('d.md', 1, caps);

    expect(admitted.map((a) => a.result)).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(refused.result).toEqual({ ok: false, period, used: 12, cap: 12 });
    expect(store.getOp(refused.id)).toMatchObject({ state: 'pending', reserved: 0, attempts: 0 });
    expect(store.creditsUsed(run)[period]).toBe(12);
  });

  it('names the first period that would overrun: run, then day, then month', () => {
    const { result } = reserveNew('a.md', 5, { run: 4, day: 4, month: 4 });

    expect(result).toEqual({ ok: false, period: 'run', used: 0, cap: 4 });
    expect(reserveNew('b.md', 5, { run: 9, day: 4, month: 4 }).result).toMatchObject({ period: 'day' });
    expect(reserveNew('c.md', 5, { run: 9, day: 9, month: 4 }).result).toMatchObject({ period: 'month' });
  });

  it('admits a free op at a cap of zero', () => {
    expect(reserveNew('a.md', 0, { run: 0, day: 0, month: 0 }).result).toEqual({ ok: true });
  });

  it('counts earlier runs against the day and month, and a new UTC day starts the day afresh', () => {
    const caps = { run: 15, day: 12, month: 20 };
    const a = reserveNew('a.md', 10, caps);
    store.settle(a.id, { outcome: 'done', creditsCharged: 10, remoteId: '1' });
    const run2 = store.startRun('sync');

    expect(reserveNew('b.md', 3, caps, run2).result).toEqual({ ok: false, period: 'day', used: 10, cap: 12 });
    clock.set('2025-03-15T00:00:00.000Z');
    expect(reserveNew('c.md', 11, caps, run2).result).toEqual({ ok: false, period: 'month', used: 10, cap: 20 });
    expect(reserveNew('d.md', 9, caps, run2).result).toEqual({ ok: true });
    expect(store.creditsUsed(run2)).toMatchObject({ run: 9, day: 9, month: 19, utcDay: '2025-03-15', utcMonth: '2025-03' });
  });

  it('a new UTC month starts the month afresh', () => {
    clock.set('2025-03-31T23:59:59.999Z');
    reserveNew('a.md', 10, { run: BIG, day: BIG, month: 10 });
    clock.advance(1);

    expect(reserveNew('b.md', 10, { run: BIG, day: BIG, month: 10 }).result).toEqual({ ok: true });
    expect(store.creditsUsed(run)).toMatchObject({ day: 10, month: 10, utcMonth: '2025-04' });
  });

  it('books a spend in the day of its reservation, also when it settles after midnight', () => {
    clock.set('2025-03-14T23:59:00.000Z');
    const a = reserveNew('a.md', 5, { run: BIG, day: 5, month: BIG });
    clock.set('2025-03-15T00:01:00.000Z');

    store.settle(a.id, { outcome: 'done', creditsCharged: 5, remoteId: '1' });

    expect(store.creditsUsed(run)).toMatchObject({ day: 0, month: 5, run: 5 });
    expect(store.ledgerTotals().byDay).toEqual(new Map([['2025-03-14', { reserved: 0, spent: 5 }]]));
  });

  it("done: the reservation becomes the server's charge and the tracked file is recorded", () => {
    const a = reserveNew('a.md', 7, { run: BIG, day: BIG, month: BIG });
    clock.advance(1000);

    store.settle(a.id, { outcome: 'done', creditsCharged: 6, remoteId: '41', remoteStatus: 'processing' });

    expect(store.getOp(a.id)).toMatchObject({ state: 'done', reserved: 0, remoteId: '41' });
    expect(store.creditsUsed(run)).toMatchObject({ run: 6, spent: { run: 6, day: 6, month: 6 }, reserved: { run: 0, day: 0, month: 0 } });
    expect(store.getTracked('docs', 'a.md')).toEqual({
      source: 'docs',
      path: 'a.md',
      size: 1234,
      mtimeNs: '1718000000123456789',
      inode: 42,
      sha256: 'ab'.repeat(32),
      remoteName: 'a.md',
      remoteId: '41',
      remoteStatus: 'processing',
      reprocessAttempts: 0,
      lastAction: 'upload',
      lastReason: 'new file',
      updatedAt: '2025-03-14T12:00:01.000Z',
    });
  });

  it('done without a charge from the server books the planned credits', () => {
    const a = reserveNew('a.md', 7, { run: BIG, day: BIG, month: BIG });

    store.settle(a.id, { outcome: 'done', creditsCharged: null, remoteId: '41' });

    expect(store.creditsUsed(run).spent.run).toBe(7);
  });

  it('records an over-charge truthfully and then refuses more work in that period', () => {
    const a = reserveNew('a.md', 5, { run: 10, day: BIG, month: BIG });
    store.settle(a.id, { outcome: 'done', creditsCharged: 11, remoteId: '1' });

    expect(store.creditsUsed(run).run).toBe(11);
    expect(reserveNew('b.md', 0, { run: 10, day: BIG, month: BIG }).result).toEqual({ ok: false, period: 'run', used: 11, cap: 10 });
  });

  it('failed: the reservation is released (a refused call costs nothing)', () => {
    const a = reserveNew('a.md', 5, { run: 5, day: 5, month: 5 });

    store.settle(a.id, { outcome: 'failed', code: 'file_too_large', error: 'over 100 MB' });

    expect(store.getOp(a.id)).toMatchObject({ state: 'failed', errorCode: 'file_too_large', error: 'over 100 MB', reserved: 0 });
    expect(store.creditsUsed(run)).toMatchObject({ run: 0, day: 0, month: 0 });
    expect(store.getTracked('docs', 'a.md')).toBeNull();
    expect(reserveNew('b.md', 5, { run: 5, day: 5, month: 5 }).result).toEqual({ ok: true });
  });

  it('unknown: the reservation stays counted until reconciled', () => {
    const a = reserveNew('a.md', 5, { run: 5, day: 5, month: 5 });

    store.settle(a.id, { outcome: 'unknown', code: 'timeout', error: 'no response in 30 s' });

    expect(store.unknownOps()).toMatchObject([{ id: a.id, errorCode: 'timeout', reserved: 5 }]);
    reserveNew('c.md', 0, { run: 5, day: 5, month: 5 });
    expect(store.openOpCounts()).toEqual({ pending: store.pendingOps().length, unknown: 1 });
    expect(store.creditsUsed(run)).toMatchObject({ run: 5, reserved: { run: 5, day: 5, month: 5 } });
    expect(reserveNew('b.md', 1, { run: 5, day: 5, month: 5 }).result).toMatchObject({ ok: false });
  });

  it('resolveUnknown(found): done at the planned credits, the file recorded', () => {
    const a = reserveNew('a.md', 5, { run: BIG, day: BIG, month: BIG });
    store.settle(a.id, { outcome: 'unknown', code: 'timeout', error: 'x' });

    store.resolveUnknown(a.id, { remoteId: '77', status: 'processed' });

    expect(store.getOp(a.id)).toMatchObject({ state: 'done', remoteId: '77', reserved: 0 });
    expect(store.creditsUsed(run)).toMatchObject({ run: 5, spent: { run: 5, day: 5, month: 5 } });
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ remoteId: '77', remoteStatus: 'processed' });
  });

  it('resolveUnknown(null): back to pending, released, retried with the same idempotency key', () => {
    const a = reserveNew('a.md', 5, { run: 5, day: 5, month: 5 });
    const key = store.getOp(a.id)?.idempotencyKey;
    store.settle(a.id, { outcome: 'unknown', code: 'network', error: 'reset' });

    store.resolveUnknown(a.id, null);

    expect(store.getOp(a.id)).toMatchObject({ state: 'pending', reserved: 0, idempotencyKey: key });
    expect(store.creditsUsed(run).run).toBe(0);
    expect(store.reserve(a.id, { run: 5, day: 5, month: 5 }, run)).toEqual({ ok: true });
    expect(store.getOp(a.id)).toMatchObject({ state: 'in_flight', attempts: 2, idempotencyKey: key });
  });

  it('reprocess done counts an attempt on the tracked file; reindex done is noted in meta', () => {
    const a = reserveNew('a.md', 5, { run: BIG, day: BIG, month: BIG });
    store.settle(a.id, { outcome: 'done', creditsCharged: 5, remoteId: '9', remoteStatus: 'failed' });
    const r = store.enqueue({
      kind: 'reprocess',
      source: 'docs',
      path: 'a.md',
      remoteId: '9',
      credits: 5,
      reason: 'remote processing failed',
    });
    const x = store.enqueue({ kind: 'reindex', credits: 2 });
    store.reserve(r, { run: BIG, day: BIG, month: BIG }, run);
    store.reserve(x, { run: BIG, day: BIG, month: BIG }, run);

    store.settle(r, { outcome: 'done', creditsCharged: 5, remoteStatus: 'queued' });
    store.settle(x, { outcome: 'done', creditsCharged: 2 });

    expect(store.getTracked('docs', 'a.md')).toMatchObject({
      reprocessAttempts: 1,
      remoteStatus: 'queued',
      lastAction: 'reprocess',
      lastReason: 'remote processing failed',
    });
    expect(store.getMeta('last_reindex_at')).toBe('2025-03-14T12:00:00.000Z');
    expect(store.creditsUsed(run).spent.run).toBe(12);
  });

  it('refuses transitions from the wrong state', () => {
    const a = store.enqueue(uploadOp('a.md', 5));

    expect(conflict(() => store.settle(a, { outcome: 'done', creditsCharged: 5, remoteId: '1' }))).toBe(true);
    expect(conflict(() => store.resolveUnknown(a, null))).toBe(true);
    store.reserve(a, { run: BIG, day: BIG, month: BIG }, run);
    expect(conflict(() => store.reserve(a, { run: BIG, day: BIG, month: BIG }, run))).toBe(true);
    expect(conflict(() => store.reserve(999, { run: BIG, day: BIG, month: BIG }, run))).toBe(true);
  });

  it('rolls back a settle it cannot complete', () => {
    const a = reserveNew('a.md', 5, { run: BIG, day: BIG, month: BIG });

    expect(() => store.settle(a.id, { outcome: 'done', creditsCharged: 5 })).toThrow(/without a remote id/);

    expect(store.getOp(a.id)).toMatchObject({ state: 'in_flight', reserved: 5 });
    expect(store.creditsUsed(run)).toMatchObject({ reserved: { run: 5, day: 5, month: 5 }, spent: { run: 0, day: 0, month: 0 } });
  });

  it('gives the planner its budget window', () => {
    reserveNew('a.md', 5, { run: BIG, day: BIG, month: BIG });

    expect(store.budgetWindow({ run: 100, day: 200, month: 300 }, run)).toEqual({
      caps: { run: 100, day: 200, month: 300 },
      used: { run: 5, day: 5, month: 5 },
    });
    expect(store.budgetWindow({ run: 100, day: 200, month: 300 }, null).used).toEqual({ run: 0, day: 5, month: 5 });
  });
});
