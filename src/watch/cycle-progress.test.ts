import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DaemonContext } from './context.js';
import { createCycleProgress, paceEtaMs, PROGRESS_PUBLISH_MS } from './cycle-progress.js';
import { newSnapshot } from './snapshot.js';

/** Just what the progress reads of the daemon's context, with a count of its publishes. */
function fakeContext(requestsPerSecond: number): { ctx: DaemonContext; published: () => number } {
  let published = 0;
  const ctx = {
    deps: { config: { upload: { requestsPerSecond } } },
    snapshot: newSnapshot(new Date(0).toISOString()),
    nowMs: Date.now,
    iso: (ms = Date.now()) => new Date(ms).toISOString(),
    publish: () => published++,
  } as unknown as DaemonContext;
  return { ctx, published: () => published };
}

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

describe('the running cycle in the snapshot', () => {
  it('gives an end time only when the rate limit holds the calls left long enough to matter', () => {
    expect(paceEtaMs(100, 5, 0)).toBe(20_000);
    expect(paceEtaMs(20, 5, 0)).toBeNull();
    expect(paceEtaMs(30, 0.5, 0)).toBe(60_000);
  });

  it('says why it runs, its calls done of planned, the credits so far and its ETA, published at most once a second', async () => {
    const { ctx, published } = fakeContext(2);
    const p = createCycleProgress(ctx);
    p.start(['changes', 'rescan']);
    expect(ctx.snapshot.cycle).toEqual({
      startedAt: new Date(1_000_000).toISOString(),
      reasons: ['changes', 'rescan'],
      done: 0,
      total: 0,
      creditsSoFar: 0,
      etaAt: null,
    });
    p.planned(40);
    expect(ctx.snapshot.cycle).toMatchObject({ total: 40, etaAt: new Date(1_000_000 + 20_000).toISOString() });
    for (let i = 1; i <= 30; i++) p.settled(i, 40, 1);
    expect(ctx.snapshot.cycle).toMatchObject({ done: 30, total: 40, creditsSoFar: 30, etaAt: null });
    await vi.advanceTimersByTimeAsync(0);
    expect(published()).toBe(1);
    p.settled(31, 40, 5);
    await vi.advanceTimersByTimeAsync(PROGRESS_PUBLISH_MS / 2);
    expect(published()).toBe(1);
    await vi.advanceTimersByTimeAsync(PROGRESS_PUBLISH_MS);
    expect(published()).toBe(2);
    expect(ctx.snapshot.cycle?.creditsSoFar).toBe(35);
    p.settled(32, 40, 1);
    p.end();
    await vi.advanceTimersByTimeAsync(PROGRESS_PUBLISH_MS * 2);
    expect(ctx.snapshot.cycle).toBeNull();
    expect(published()).toBe(2);
  });
});
