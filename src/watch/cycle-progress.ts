import type { DaemonContext } from './context.js';
import { paceLine } from './pace.js';
import type { CycleReason } from './scheduler.js';

/** Shortest time between two snapshots a running cycle's progress publishes (the status file, open pages). */
export const PROGRESS_PUBLISH_MS = 1000;

/**
 * When `left` paid calls end at upload.requestsPerSecond, from `nowMs`; null when the rate does not hold
 * them long enough to matter (paceLine's threshold: the same calls the log gives a pace line).
 */
export function paceEtaMs(left: number, requestsPerSecond: number, nowMs: number): number | null {
  const pace = paceLine(left, requestsPerSecond);
  return pace === null ? null : nowMs + pace.seconds * 1000;
}

export type CycleProgress = {
  start(reasons: readonly CycleReason[]): void;
  /** The cycle's plan has `total` paid calls. */
  planned(total: number): void;
  /** A paid call settled: `done` of `total`, `credits` charged by it. */
  settled(done: number, total: number, credits: number): void;
  /** The cycle ended (well or not): the snapshot has no running cycle. */
  end(): void;
};

/**
 * The running cycle in the daemon's snapshot (`snapshot.cycle`): why it runs, its paid calls done of
 * those planned, credits so far and, when the rate limit paces it, when it ends. Published at most
 * once per PROGRESS_PUBLISH_MS while calls settle, so a fast cycle writes its status file a few times.
 */
export function createCycleProgress(ctx: DaemonContext): CycleProgress {
  const { snapshot, nowMs, iso } = ctx;
  let timer: NodeJS.Timeout | null = null;
  let lastMs = 0;
  const publishSoon = (): void => {
    if (timer !== null) return;
    const wait = Math.max(0, lastMs + PROGRESS_PUBLISH_MS - nowMs());
    timer = setTimeout(() => {
      timer = null;
      lastMs = nowMs();
      if (snapshot.cycle !== null) ctx.publish();
    }, wait);
    timer.unref();
  };
  const eta = (left: number): string | null => {
    const at = paceEtaMs(left, ctx.deps.config.upload.requestsPerSecond, nowMs());
    return at === null ? null : iso(at);
  };
  return {
    start(reasons) {
      snapshot.cycle = { startedAt: iso(), reasons: [...reasons], done: 0, total: 0, creditsSoFar: 0, etaAt: null };
    },
    planned(total) {
      const c = snapshot.cycle;
      if (c === null) return;
      c.total = total;
      c.etaAt = eta(total);
      publishSoon();
    },
    settled(done, total, credits) {
      const c = snapshot.cycle;
      if (c === null) return;
      c.done = done;
      c.total = total;
      c.creditsSoFar += credits;
      c.etaAt = eta(total - done);
      publishSoon();
    },
    end() {
      snapshot.cycle = null;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
