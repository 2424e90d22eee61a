import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../src/shared/errors.js';
import type { StateStore } from '../../../src/sync/state/index.js';
import { fakeClock, tempState, uploadOp } from './fixtures/state-dir.js';

const CAPS = { run: 1000, day: 1000, month: 1000 };

describe('outbox', () => {
  let t: ReturnType<typeof tempState>;
  let store: StateStore;
  const clock = fakeClock('2025-03-14T12:00:00.000Z');
  beforeEach(() => {
    t = tempState();
    store = t.open({ now: clock.now });
  });
  afterEach(() => t.cleanup());

  it('enqueues a durable pending op with a fresh idempotency key and no reservation', () => {
    const run = store.startRun('sync');

    const id = store.enqueue({ ...uploadOp('a.md', 5), remoteName: 'docs/a.md', runId: run });
    const other = store.enqueue(uploadOp('b.md', 5));

    expect(store.getOp(id)).toEqual({
      id,
      runId: run,
      kind: 'upload',
      source: 'docs',
      path: 'a.md',
      sha256: 'ab'.repeat(32),
      size: 1234,
      mtimeNs: '1718000000123456789',
      inode: 42,
      remoteName: 'docs/a.md',
      remoteId: null,
      reason: 'new file',
      credits: 5,
      idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/),
      state: 'pending',
      reserved: 0,
      reservedAt: null,
      errorCode: null,
      error: null,
      attempts: 0,
      createdAt: '2025-03-14T12:00:00.000Z',
      updatedAt: '2025-03-14T12:00:00.000Z',
      payload: null,
    });
    expect(store.getOp(other)?.idempotencyKey).not.toBe(store.getOp(id)?.idempotencyKey);
    expect(store.pendingOps().map((o) => o.id)).toEqual([id, other]);
    expect(store.creditsUsed(run)).toMatchObject({ run: 0, day: 0, month: 0 });
  });

  it('returns the open op instead of queueing the same work twice', () => {
    const run = store.startRun('sync');
    const first = store.enqueue(uploadOp('a.md', 5));
    store.reserve(first, CAPS, run);
    store.settle(first, { outcome: 'unknown', code: 'timeout', error: 'no answer' });

    const again = store.enqueue(uploadOp('a.md', 5));

    expect(again).toBe(first);
    expect(store.enqueue({ kind: 'reprocess', source: 'docs', path: 'a.md', remoteId: '9', credits: 5 })).toBe(
      store.enqueue({ kind: 'reprocess', source: 'docs', path: 'a.md', remoteId: '9', credits: 5 }),
    );
    expect(store.enqueue({ kind: 'reindex', credits: 2 })).toBe(store.enqueue({ kind: 'reindex', credits: 2 }));
  });

  it("gives a still-queued op of the same work today's price (target.uploadCost changed), never a reserved one", () => {
    const run = store.startRun('sync');
    const queued = store.enqueue(uploadOp('a.md', 5));
    const reserved = store.enqueue(uploadOp('b.md', 5));
    store.reserve(reserved, CAPS, run);
    store.settle(reserved, { outcome: 'unknown', code: 'timeout', error: 'no answer' });

    expect(store.enqueue(uploadOp('a.md', 7))).toBe(queued);
    expect(store.enqueue(uploadOp('b.md', 7))).toBe(reserved);

    expect(store.getOp(queued)?.credits).toBe(7);
    expect(store.getOp(reserved)?.credits).toBe(5);
  });

  it('cancels a pending op superseded by newer content, but not one in flight', () => {
    const run = store.startRun('sync');
    const old = store.enqueue(uploadOp('a.md', 5, 'aa'.repeat(32)));
    const flying = store.enqueue(uploadOp('b.md', 5, 'aa'.repeat(32)));
    store.reserve(flying, CAPS, run);

    const newer = store.enqueue(uploadOp('a.md', 5, 'bb'.repeat(32)));
    const newerB = store.enqueue(uploadOp('b.md', 5, 'bb'.repeat(32)));

    expect(store.getOp(old)).toMatchObject({ state: 'cancelled', error: 'superseded by newer content' });
    expect(store.getOp(flying)?.state).toBe('in_flight');
    expect(store.pendingOps().map((o) => o.id)).toEqual([newer, newerB]);
  });

  it('enqueues many ops in one go', () => {
    const ids = store.enqueueMany([uploadOp('a.md', 5), uploadOp('b.md', 6), { kind: 'reindex', credits: 2 }]);

    expect(ids).toHaveLength(3);
    expect(store.pendingOps().map((o) => [o.kind, o.path, o.credits])).toEqual([
      ['upload', 'a.md', 5],
      ['upload', 'b.md', 6],
      ['reindex', null, 2],
    ]);
  });

  it('cancels only pending ops', () => {
    const run = store.startRun('sync');
    const a = store.enqueue(uploadOp('a.md', 5));
    const b = store.enqueue(uploadOp('b.md', 5));
    store.reserve(b, CAPS, run);

    store.cancelOp(a, 'no longer wanted');

    expect(store.getOp(a)).toMatchObject({ state: 'cancelled', error: 'no longer wanted' });
    let err: unknown;
    try {
      store.cancelOp(b);
    } catch (e) {
      err = e;
    }
    expect(isKbsyncError(err, 'state_conflict')).toBe(true);
  });

  it('turns ops a crash left in flight into unknown on the next open, keeping their reservation', () => {
    const run = store.startRun('sync');
    const id = store.enqueue(uploadOp('a.md', 5));
    store.reserve(id, CAPS, run);
    store.close();

    const reopened = t.open({ now: clock.now });

    expect(reopened.recoveredInFlight).toBe(1);
    expect(reopened.unknownOps()).toMatchObject([{ id, state: 'unknown', errorCode: 'unknown_outcome', reserved: 5 }]);
    expect(reopened.inFlightOps()).toEqual([]);
    expect(reopened.creditsUsed(run)).toMatchObject({ run: 5, reserved: { run: 5, day: 5, month: 5 } });
    expect(reopened.getRun(run)?.status).toBe('interrupted');
  });

  it('leaves in-flight ops alone when opened without the lock (their process may be alive)', () => {
    const run = store.startRun('sync');
    const id = store.enqueue(uploadOp('a.md', 5));
    store.reserve(id, CAPS, run);

    const viewer = t.open({ lock: false });

    expect(viewer.recoveredInFlight).toBe(0);
    expect(viewer.getOp(id)?.state).toBe('in_flight');
  });

  it('deletes done and cancelled ops when their run finishes, keeping failures and open work', () => {
    const run = store.startRun('sync');
    const [done, failed, cancelled, pending] = store.enqueueMany([
      uploadOp('a.md', 5),
      uploadOp('b.md', 5),
      uploadOp('c.md', 5),
      uploadOp('d.md', 5),
    ]) as [number, number, number, number];
    store.reserve(done, CAPS, run);
    store.settle(done, { outcome: 'done', creditsCharged: 5, remoteId: '1' });
    store.reserve(failed, CAPS, run);
    store.settle(failed, { outcome: 'failed', code: 'unsupported_file_type', error: 'no' });
    store.cancelOp(cancelled);

    expect(store.getOp(done)?.state).toBe('done');
    store.finishRun(run, 'done', { uploaded: 1 });

    expect([done, failed, cancelled, pending].map((id) => store.getOp(id)?.state ?? null)).toEqual([null, 'failed', null, 'pending']);
    expect(store.opsForPath('docs', 'b.md').map((o) => o.errorCode)).toEqual(['unsupported_file_type']);
    expect(store.getTracked('docs', 'a.md')?.remoteId).toBe('1');
    expect(store.creditsUsed(run).spent.run).toBe(5);
    expect(store.verifyTotals()).toEqual([]);
  });
});

describe('op ids', () => {
  let t: ReturnType<typeof tempState>;
  beforeEach(() => (t = tempState()));
  afterEach(() => t.cleanup());

  // Regression: with a plain rowid, the next op reused a pruned op's id and the ledger showed two spends for "one" op.
  it('are never reused after done ops are pruned', () => {
    const store = t.open();
    const run = store.startRun('sync');
    const a = store.enqueue(uploadOp('a.md', 5));
    store.reserve(a, CAPS, run);
    store.settle(a, { outcome: 'done', creditsCharged: 5, remoteId: '1' });
    store.finishRun(run, 'done', null);

    const b = store.enqueue(uploadOp('b.md', 5));

    expect(store.getOp(a)).toBeNull();
    expect(b).toBeGreaterThan(a);
  });
});

describe('outbox failures', () => {
  let t: ReturnType<typeof tempState>;
  beforeEach(() => (t = tempState()));
  afterEach(() => t.cleanup());

  it("keeps each path's latest failure once its run is over, not one row per failed run", () => {
    const store = t.open();
    const failOnce = (path: string, error: string): number => {
      const run = store.startRun('sync');
      const op = store.enqueue({ ...uploadOp(path, 5), runId: run });
      store.reserve(op, CAPS, run);
      store.settle(op, { outcome: 'failed', code: 'validation_failed', error });
      store.finishRun(run, 'done', null);
      return op;
    };

    failOnce('a.md', 'first');
    failOnce('b.md', 'only');
    failOnce('a.md', 'second');
    const last = failOnce('a.md', 'third');

    expect(store.opsForPath('docs', 'a.md').map((o) => [o.id, o.state, o.error])).toEqual([[last, 'failed', 'third']]);
    expect(store.opsForPath('docs', 'b.md').map((o) => [o.state, o.error])).toEqual([['failed', 'only']]);
  });
});

describe('runs and meta', () => {
  let t: ReturnType<typeof tempState>;
  beforeEach(() => (t = tempState()));
  afterEach(() => t.cleanup());

  it('records runs with their summary', () => {
    const clock = fakeClock('2025-03-14T12:00:00.000Z');
    const store = t.open({ now: clock.now });
    const first = store.startRun('plan');
    store.finishRun(first, 'done', null);
    const second = store.startRun('sync');
    clock.advance(2500);

    store.finishRun(second, 'stopped', { uploaded: 3, reason: 'budget' });

    expect(store.lastRun()).toEqual({
      id: second,
      command: 'sync',
      status: 'stopped',
      startedAt: '2025-03-14T12:00:00.000Z',
      finishedAt: '2025-03-14T12:00:02.500Z',
      summary: { uploaded: 3, reason: 'budget' },
    });
    expect(store.lastRun('plan')?.id).toBe(first);
    expect(() => store.finishRun(second, 'done', null)).toThrow(/not running/);
  });

  it('keeps meta values and the last synced commit per git source', () => {
    const store = t.open();

    store.setMeta('k', 'v');
    store.setLastSyncedCommit('repo', 'abc123', 'url\ndocs');
    store.setLastSyncedCommit('repo', 'def456', 'url\ndocs');

    expect(store.getMeta('k')).toBe('v');
    expect(store.lastSyncedCommit('repo', 'url\ndocs')).toBe('def456');
    // Synced with another subdir or url, the paths were other files: no commit to diff from.
    expect(store.lastSyncedCommit('repo', 'url\nguide')).toBeNull();
    expect(store.lastSyncedCommit('other', 'url\ndocs')).toBeNull();
    // A plain commit, as an older kbsync kept it (no scope): compared in full once.
    store.setMeta('git.last_commit.old', 'abc123');
    expect(store.lastSyncedCommit('old', 'url\n')).toBeNull();
    store.setMeta('k', null);
    expect(store.getMeta('k')).toBeNull();
  });
});
