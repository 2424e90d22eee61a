import type { CronWindow } from '../shared/cron.js';

/** Why a sync cycle of `kbsync watch` runs. */
export type CycleReason =
  'start' | 'changes' | 'rescan' | 'git-poll' | 'budget-rollover' | 'retry' | 'reprocess' | 'deferred' | 'reload' | 'resume';

/** One sync cycle; its promise settles when the cycle is over (a rejection is the cycle's failure). */
export type RunCycle = (reasons: readonly CycleReason[]) => Promise<void>;

export type SchedulerOptions = {
  /** Quiet time after the last hint before a cycle starts. */
  debounceMs: number;
  /** A cycle starts this long after the last one ended, hint or not (the safety-net rescan). */
  rescanMs: number;
  runCycle: RunCycle;
  /** Called when a cycle throws; the scheduler goes on. */
  onCycleError?: (err: unknown) => void;
  /** Called after each cycle, once the next one is armed (what the scheduler waits for has changed). */
  onIdle?: () => void;
  nowMs?: () => number;
  /** `watch.schedule`: cycles start only while it is open; one due outside it waits for the next opening. */
  window?: CronWindow | null;
};

/** What the scheduler is doing or waiting for (for `kbsync status` and /metrics). */
export type SchedulerState = {
  running: boolean;
  /** Reasons collected for the next cycle. */
  pending: CycleReason[];
  /** When the debounced cycle starts (ms since the epoch), if one is armed. */
  debouncedAtMs: number | null;
  nextRescanAtMs: number | null;
  /** Cycles asked for at a time of their own (a budget rollover, a retry), earliest first. */
  timed: { atMs: number; reason: CycleReason }[];
  cycles: number;
  /** With a schedule, when the window opens for the cycle waiting outside it (ms since the epoch). */
  windowOpensAtMs: number | null;
};

export type Scheduler = {
  /**
   * Something may have changed: a cycle starts debounceMs after the latest settle point of the hints
   * since the last cycle started. `settledAtMs`: when the change settled (a file's ctime, so that the
   * watcher's own delivery delay is not added to the debounce); default now, the hint's arrival.
   */
  hint(reason: CycleReason, settledAtMs?: number): void;
  /** A cycle as soon as none is running (no debounce). */
  soon(reason: CycleReason): void;
  /** A cycle at `atMs` (ms since the epoch); far times are re-armed in steps setTimeout can hold. */
  at(atMs: number, reason: CycleReason): void;
  state(): SchedulerState;
  /** Stops every timer; resolves when the cycle running now (if any) has ended. No cycle starts after. */
  stop(): Promise<void>;
  /** The cycle running now, or a resolved promise. */
  current(): Promise<void>;
};

/** Longest delay setTimeout holds (about 24.8 days); a later time is reached in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * The timing of `kbsync watch`: events are hints that arm one debounced cycle (a burst of them gives one),
 * one cycle runs at a time (hints that arrive during it arm the next), and every cycle re-arms the rescan
 * timer, so the walk runs at least every rescanMs however quiet the watcher is. Uses the global timers
 * (fake timers in tests).
 */
export function createScheduler(o: SchedulerOptions): Scheduler {
  const nowMs = o.nowMs ?? Date.now;
  const pending = new Set<CycleReason>();
  let running: Promise<void> | null = null;
  let debounce: { timer: NodeJS.Timeout; atMs: number } | null = null;
  let rescan: { timer: NodeJS.Timeout; atMs: number } | null = null;
  const timed: { atMs: number; reason: CycleReason; timer: NodeJS.Timeout }[] = [];
  let wantSoon = false;
  let stopped = false;
  let windowWait: { timer: NodeJS.Timeout; atMs: number } | null = null;
  let cycles = 0;
  /** The latest settle point of the hints since the last cycle started (-Infinity: none). */
  let settledAtMs = Number.NEGATIVE_INFINITY;

  const armRescan = (): void => {
    if (rescan !== null) clearTimeout(rescan.timer);
    const atMs = nowMs() + o.rescanMs;
    const arm = (): NodeJS.Timeout => {
      const wait = atMs - nowMs();
      return setTimeout(
        () => {
          if (atMs - nowMs() > 0) {
            (rescan as { timer: NodeJS.Timeout }).timer = arm();
            return;
          }
          rescan = null;
          soon('rescan');
        },
        Math.min(Math.max(wait, 0), MAX_TIMEOUT_MS),
      );
    };
    rescan = { atMs, timer: arm() };
  };

  /** Outside the schedule's window: one timer to the next opening (the pending reasons wait for it). */
  const waitForWindow = (): boolean => {
    const w = o.window;
    if (w === undefined || w === null || w.isOpen(nowMs())) return false;
    if (debounce !== null) {
      clearTimeout(debounce.timer);
      debounce = null;
    }
    if (windowWait !== null) return true;
    const atMs = w.nextOpenMs(nowMs());
    if (atMs === null) return true;
    const arm = (): NodeJS.Timeout =>
      setTimeout(
        () => {
          if (atMs - nowMs() > 0) {
            (windowWait as { timer: NodeJS.Timeout }).timer = arm();
            return;
          }
          windowWait = null;
          start();
        },
        Math.min(Math.max(atMs - nowMs(), 0), MAX_TIMEOUT_MS),
      );
    windowWait = { atMs, timer: arm() };
    return true;
  };

  const start = (): void => {
    if (stopped || running !== null || pending.size === 0) return;
    if (waitForWindow()) return;
    if (debounce !== null) {
      clearTimeout(debounce.timer);
      debounce = null;
    }
    wantSoon = false;
    const reasons = [...pending];
    pending.clear();
    settledAtMs = Number.NEGATIVE_INFINITY;
    cycles++;
    running = (async () => {
      try {
        await o.runCycle(reasons);
      } catch (err) {
        o.onCycleError?.(err);
      } finally {
        running = null;
        if (!stopped) {
          armRescan();
          // Hints that came during the cycle wait for their own quiet time; requests for "soon" start now.
          if (wantSoon) start();
          else if (pending.size > 0 && debounce === null) armDebounce();
        }
        o.onIdle?.();
      }
    })();
  };

  const armDebounce = (): void => {
    if (debounce !== null) clearTimeout(debounce.timer);
    const now = nowMs();
    const atMs = (Number.isFinite(settledAtMs) ? settledAtMs : now) + o.debounceMs;
    debounce = { atMs, timer: setTimeout(() => ((debounce = null), start()), Math.max(0, atMs - now)) };
  };

  const soon = (reason: CycleReason): void => {
    if (stopped) return;
    pending.add(reason);
    wantSoon = true;
    start();
  };

  const at = (atMs: number, reason: CycleReason): void => {
    if (stopped) return;
    const entry = { atMs, reason, timer: undefined as unknown as NodeJS.Timeout };
    const arm = (): void => {
      const wait = atMs - nowMs();
      if (wait <= 0) {
        timed.splice(timed.indexOf(entry), 1);
        soon(reason);
        return;
      }
      entry.timer = setTimeout(arm, Math.min(wait, MAX_TIMEOUT_MS));
    };
    timed.push(entry);
    timed.sort((a, b) => a.atMs - b.atMs);
    arm();
  };

  armRescan();
  return {
    hint(reason, at) {
      if (stopped) return;
      pending.add(reason);
      // Never later than now (a file's clock ahead, on a network mount, must not hold the cycle back).
      settledAtMs = Math.max(settledAtMs, Math.min(at ?? nowMs(), nowMs()));
      if (running === null) armDebounce();
    },
    soon,
    at,
    state: () => ({
      running: running !== null,
      pending: [...pending],
      debouncedAtMs: debounce?.atMs ?? null,
      nextRescanAtMs: rescan?.atMs ?? null,
      timed: timed.map(({ atMs, reason }) => ({ atMs, reason })),
      cycles,
      windowOpensAtMs: windowWait?.atMs ?? null,
    }),
    async stop() {
      stopped = true;
      for (const t of [debounce, rescan, windowWait, ...timed]) if (t !== null) clearTimeout(t.timer);
      debounce = rescan = windowWait = null;
      timed.length = 0;
      await running;
    },
    current: () => running ?? Promise.resolve(),
  };
}
