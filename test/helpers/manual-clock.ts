/** A hand-driven clock: `now()` and `schedule()` for code that takes them injected; `advance()` fires due timers in order. */
export type ManualClock = {
  now(): number;
  schedule(fn: () => void, delayMs: number): () => void;
  /** Moves time forward by `ms`, firing each timer at its own time (synchronously). */
  advance(ms: number): void;
  /** Delays (ms from now) of the timers still armed, soonest first. */
  pending(): number[];
};

/** A manual clock starting at `startMs` (default 2025-01-01T00:00:00Z). */
export function createManualClock(startMs = Date.UTC(2025, 0, 1)): ManualClock {
  let current = startMs;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();

  const nextDue = (until: number): [number, { at: number; fn: () => void }] | undefined =>
    [...timers.entries()].filter(([, t]) => t.at <= until).sort(([a, x], [b, y]) => x.at - y.at || a - b)[0];

  return {
    now: () => current,
    schedule(fn, delayMs) {
      const id = seq++;
      timers.set(id, { at: current + Math.max(0, delayMs), fn });
      return () => {
        timers.delete(id);
      };
    },
    advance(ms) {
      const end = current + ms;
      for (let due = nextDue(end); due !== undefined; due = nextDue(end)) {
        const [id, timer] = due;
        timers.delete(id);
        current = timer.at;
        timer.fn();
      }
      current = end;
    },
    pending: () => [...timers.values()].map((t) => t.at - current).sort((a, b) => a - b),
  };
}
