import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../client/errors.js';
import { silentLogger } from '../shared/logger.js';
import type { DaemonContext } from './context.js';
import { newSnapshot } from './snapshot.js';
import { createTargetHealth, isTargetError, TARGET_PROBE_MAX_MS } from './target-health.js';

const refused = (): ApiError =>
  new ApiError({ code: 'network', status: null, method: 'GET', url: '/datasets/', message: 'connect ECONNREFUSED' });

/** Just what the target's health reads of the daemon's context. */
function fakeContext(open: { pending: number; unknown: number }): DaemonContext {
  const snapshot = newSnapshot(new Date(0).toISOString());
  const state = {
    pendingOps: () => Array.from({ length: open.pending }),
    unknownOps: () => Array.from({ length: open.unknown }),
  };
  return {
    deps: { logger: silentLogger(), state },
    snapshot,
    nowMs: Date.now,
    iso: (ms = Date.now()) => new Date(ms).toISOString(),
    lifetime: new AbortController(),
    publish: () => {},
  } as unknown as DaemonContext;
}

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

describe('the target health of the daemon', () => {
  it('probes 2 s after the first failure, doubling to at most 60 s (jitter between half and all of each step), and resumes at the first answer', async () => {
    const ctx = fakeContext({ pending: 7, unknown: 0 });
    let answers = false;
    const probes: number[] = [];
    const resumes: number[] = [];
    const health = createTargetHealth(ctx, {
      probe: async () => {
        probes.push(Date.now());
        if (!answers) throw refused();
      },
      resume: () => resumes.push(Date.now()),
      // The top of each step: the waits are then exactly the steps.
      random: () => 0.999_999_9,
    });
    health.down(refused(), 'sending');
    expect(health.isDown()).toBe(true);
    expect(ctx.snapshot.target).toMatchObject({ reachable: false, changesWaiting: 7, lastError: expect.stringMatching(/ECONNREFUSED/) });
    for (let i = 0; i < 8; i++) await vi.advanceTimersByTimeAsync(TARGET_PROBE_MAX_MS);
    const gaps = probes.map((at, i) => at - (i === 0 ? 1_000_000 : (probes[i - 1] as number)));
    expect(gaps.slice(0, 6)).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000]);
    expect(resumes).toEqual([]);
    expect(ctx.snapshot.counters.retries).toBe(probes.length);

    answers = true;
    await vi.advanceTimersByTimeAsync(TARGET_PROBE_MAX_MS);
    expect(resumes).toHaveLength(1);
    // Held until the resumed cycle reaches the target.
    expect(ctx.snapshot.target.reachable).toBe(false);
    expect(health.isDown()).toBe(false);
    health.fine();
    expect(ctx.snapshot.target).toMatchObject({ reachable: true, unreachableSince: null, nextProbeAt: null });
    health.close();
  });

  it('keeps the balance the probe answer reports (credits_remaining), and none when it reports none', async () => {
    const ctx = fakeContext({ pending: 0, unknown: 0 });
    let credits: number | null = null;
    const health = createTargetHealth(ctx, { probe: async () => ({ creditsRemaining: credits }), resume: () => {}, random: () => 0.5 });
    health.down(refused(), 'sending');
    await vi.advanceTimersByTimeAsync(TARGET_PROBE_MAX_MS);
    expect(ctx.snapshot.balance).toBeNull();
    credits = 958;
    health.down(refused(), 'sending');
    await vi.advanceTimersByTimeAsync(TARGET_PROBE_MAX_MS);
    expect(ctx.snapshot.balance).toEqual({ credits: 958, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    health.close();
  });

  it('draws each wait between half and all of its step', async () => {
    const ctx = fakeContext({ pending: 1, unknown: 0 });
    const probes: number[] = [];
    const health = createTargetHealth(ctx, {
      probe: async () => {
        probes.push(Date.now());
        throw refused();
      },
      resume: () => {},
      random: () => 0,
    });
    health.down(refused(), 'sending');
    for (let i = 0; i < 3; i++) await vi.advanceTimersByTimeAsync(TARGET_PROBE_MAX_MS);
    expect(probes[0]).toBe(1_000_000 + 1000);
    expect((probes[1] as number) - (probes[0] as number)).toBe(2000);
    health.close();
  });

  it('a resumed cycle that fails again goes on with the back-off where it was, keeping since when', async () => {
    const ctx = fakeContext({ pending: 2, unknown: 1 });
    const probes: number[] = [];
    const health = createTargetHealth(ctx, {
      probe: async () => void probes.push(Date.now()),
      resume: () => {},
      random: () => 0.999_999_9,
    });
    health.down(refused(), 'sending');
    const since = ctx.snapshot.target.unreachableSince;
    await vi.advanceTimersByTimeAsync(2000);
    expect(probes).toHaveLength(1);
    health.down(refused(), 'sending');
    expect(ctx.snapshot.target).toMatchObject({ reachable: false, unreachableSince: since, changesWaiting: 3 });
    await vi.advanceTimersByTimeAsync(3999);
    expect(probes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(probes).toHaveLength(2);
    health.close();
  });

  it('outcomes left unknown while the target answers: a cycle settles them after the back-off', async () => {
    const ctx = fakeContext({ pending: 0, unknown: 2 });
    const resumes: number[] = [];
    const health = createTargetHealth(ctx, { probe: async () => {}, resume: () => resumes.push(Date.now()), random: () => 0.999_999_9 });
    health.settleLater();
    await vi.advanceTimersByTimeAsync(1999);
    expect(resumes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(resumes).toEqual([1_002_000]);
    expect(health.isDown()).toBe(false);
    health.close();
  });

  it('tells a failure of the target from one of the request', () => {
    expect(isTargetError(refused())).toBe(true);
    expect(isTargetError(new ApiError({ code: 'internal', status: 503, method: 'GET', url: '/x', message: '503' }))).toBe(true);
    expect(isTargetError(new ApiError({ code: 'rate_limited', status: 429, method: 'GET', url: '/x', message: '429' }))).toBe(true);
    expect(isTargetError(new ApiError({ code: 'unauthorized', status: 401, method: 'GET', url: '/x', message: '401' }))).toBe(false);
    expect(isTargetError(new Error('disk full'))).toBe(false);
  });
});
