import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../shared/logger.js';
import type { DaemonContext } from './context.js';
import { createGitPoll, type RemoteCommit } from './git-poll.js';

/** A daemon context with one git source polled every second, its last synced commit `last()`; `cycle` is the cycle running, if any. */
function context(last: () => string | null, cycle: { running: Promise<void> | null } = { running: null }) {
  const soon = vi.fn();
  const ctx = {
    deps: {
      config: {
        state: '/nonexistent/state.db',
        baseDir: '/nonexistent',
        sources: [{ name: 'repo', git: { url: 'https://example.com/r.git', ref: 'main', pollSeconds: 1 } }],
      },
      logger: silentLogger(),
      state: { lastSyncedCommit: last },
    },
    scheduler: { soon, state: () => ({ running: cycle.running !== null }), current: () => cycle.running ?? Promise.resolve() },
  } as unknown as DaemonContext;
  return { ctx, soon };
}

afterEach(() => vi.useRealTimers());

describe('the git poll', () => {
  it('runs a cycle only when the remote ref names another commit than the one synced, or cannot be read', async () => {
    vi.useFakeTimers();
    let remote: string | Error = 'aaa';
    const remoteCommit: RemoteCommit = async () => {
      if (remote instanceof Error) throw remote;
      return remote;
    };
    const { ctx, soon } = context(() => 'aaa');
    const poll = createGitPoll(ctx, { remoteCommit });
    poll.start();

    await vi.advanceTimersByTimeAsync(3000);
    const unmoved = soon.mock.calls.length;
    remote = 'bbb';
    await vi.advanceTimersByTimeAsync(1000);
    const moved = soon.mock.calls.length;
    remote = new Error('unreachable');
    await vi.advanceTimersByTimeAsync(1000);
    poll.stop();
    await vi.advanceTimersByTimeAsync(5000);

    expect(unmoved).toBe(0);
    expect(moved).toBe(1);
    expect(soon.mock.calls).toEqual([['git-poll'], ['git-poll']]);
  });

  it('a poll during a cycle compares with what that cycle synced, once it ends: no second cycle for the same commit', async () => {
    vi.useFakeTimers();
    let synced = 'aaa';
    let endCycle = (): void => {};
    const cycle: { running: Promise<void> | null } = { running: null };
    // The remote moved to bbb; a cycle that syncs it runs for 5 s (longer than pollSeconds).
    cycle.running = new Promise<void>((resolve) => (endCycle = resolve)).then(() => {
      synced = 'bbb';
      cycle.running = null;
    });
    const { ctx, soon } = context(() => synced, cycle);
    const poll = createGitPoll(ctx, { remoteCommit: async () => 'bbb' });
    poll.start();

    await vi.advanceTimersByTimeAsync(4000);
    expect(soon).not.toHaveBeenCalled();
    endCycle();
    await vi.advanceTimersByTimeAsync(3000);
    poll.stop();

    expect(soon).not.toHaveBeenCalled();
  });
});
