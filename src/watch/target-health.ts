import { isApiError } from '../client/errors.js';
import { errorText } from '../shared/errors.js';
import type { DaemonContext } from './context.js';

/** First wait before the target is probed again after a failure; it doubles after each failed try, up to TARGET_PROBE_MAX_MS. */
export const TARGET_PROBE_FIRST_MS = 2000;
export const TARGET_PROBE_MAX_MS = 60_000;

/** What the daemon knows of its target, for `kbsync status`, /readyz and /metrics. */
export type TargetStatus = {
  reachable: boolean;
  /** When its calls started failing (null while reachable). */
  unreachableSince: string | null;
  /** The last failure, in words (kept after the target answers again). */
  lastError: string | null;
  lastErrorAt: string | null;
  /** Paid operations queued or awaiting reconciliation in the outbox: what waits for the target. */
  changesWaiting: number;
  /** When the target is probed next (null while reachable). */
  nextProbeAt: string | null;
};

/** True for a failure of the target rather than of the request: no answer, a timeout, a 5xx, a 429. */
export function isTargetError(err: unknown): boolean {
  if (!isApiError(err)) return false;
  if (err.status !== null && err.status >= 500) return true;
  return isApiError(err, 'network', 'timeout', 'internal', 'unknown_outcome', 'rate_limited');
}

export function reachableTarget(): TargetStatus {
  return { reachable: true, unreachableSince: null, lastError: null, lastErrorAt: null, changesWaiting: 0, nextProbeAt: null };
}

export type TargetHealth = {
  /** The target failed (`what`: the call that failed): hold the sending, probe it with a back-off. */
  down(err: unknown, what: string): void;
  /** True while the target is held as unreachable: cycles keep their work for the probe's resume. */
  isDown(): boolean;
  /** A cycle reached the target and left no fault: the back-off starts short again. */
  fine(): void;
  /** Work the target has not settled (unknown outcomes) while it answers: a cycle after the back-off settles it. */
  settleLater(): void;
  /** The outbox's open work, counted again (after a cycle). */
  count(): void;
  close(): void;
};

/**
 * The target's health as the daemon sees it. The first failed call of a cycle (refused, DNS, a timeout,
 * 5xx, a 429 storm) marks it unreachable: cycles keep what they would send (the outbox holds it
 * pending) and a free call probes the target 2 s later, then 4 s, 8 s... at most 60 s, each with jitter.
 * The first probe that answers starts a cycle (`resume`) over the work left; a cycle that fails again
 * goes on with the back-off where it was.
 */
export function createTargetHealth(
  ctx: DaemonContext,
  o: {
    /** A free call to the target; the balance it reports (the dataset's credits_remaining) goes to the snapshot. */
    probe: () => Promise<{ creditsRemaining: number | null } | void>;
    resume: () => void;
    /** The paths of changes seen and not yet planned (the burst the cycles hold): they wait too. */
    held?: { size(): number; holds(source: string, path: string): boolean };
    random?: () => number;
    firstMs?: number;
    maxMs?: number;
  },
): TargetHealth {
  const { deps, snapshot, iso, nowMs } = ctx;
  const { logger, state } = deps;
  const random = o.random ?? Math.random;
  const firstMs = o.firstMs ?? TARGET_PROBE_FIRST_MS;
  const maxMs = o.maxMs ?? TARGET_PROBE_MAX_MS;
  let delayMs = firstMs;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  // up: calls go; down: cycles hold their work while the probe backs off; resuming: the probe answered,
  // and the cycle it started decides (up when it reaches the target, down again when it fails).
  let phase: 'up' | 'down' | 'resuming' = 'up';
  const target = snapshot.target;

  const count = (): void => {
    try {
      // Each path once: a queued call's path is also carried in the burst.
      const open = [...state.pendingOps(), ...state.unknownOps()];
      const held = o.held;
      const outside =
        held === undefined
          ? open.length
          : open.filter((op) => op.path === null || op.source === null || !held.holds(op.source, op.path)).length;
      target.changesWaiting = outside + (held?.size() ?? 0);
    } catch {
      // A state that cannot be read now (a full disk) keeps the last count; the cycle reports that failure.
    }
  };

  /** The next wait: the back-off step with jitter (between half and all of it), then the step doubles. */
  const nextWait = (): number => {
    const wait = Math.round(delayMs * (0.5 + random() / 2));
    delayMs = Math.min(delayMs * 2, maxMs);
    return wait;
  };

  const arm = (waitMs: number, tick: () => void): void => {
    if (closed || ctx.lifetime.signal.aborted) return;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(tick, waitMs);
    target.nextProbeAt = iso(nowMs() + waitMs);
  };

  const probe = (): void => {
    timer = null;
    if (closed || ctx.lifetime.signal.aborted) return;
    o.probe().then(
      (answer) => {
        if (closed) return;
        if (answer != null && typeof answer.creditsRemaining === 'number')
          snapshot.balance = { credits: answer.creditsRemaining, at: iso() };
        phase = 'resuming';
        target.nextProbeAt = null;
        const downForMs = target.unreachableSince === null ? 0 : nowMs() - Date.parse(target.unreachableSince);
        logger.info({ downForMs, changesWaiting: target.changesWaiting }, 'the target answers again: sending what waited');
        o.resume();
        ctx.publish();
      },
      (err: unknown) => {
        if (closed) return;
        snapshot.counters.retries++;
        target.lastError = errorText(err);
        target.lastErrorAt = iso();
        const waitMs = nextWait();
        logger.warn({ err: target.lastError, retryInMs: waitMs, changesWaiting: target.changesWaiting }, 'the target is still unreachable');
        arm(waitMs, probe);
        ctx.publish();
      },
    );
  };

  return {
    down(err, what) {
      const message = errorText(err);
      target.lastError = message;
      target.lastErrorAt = iso();
      snapshot.lastError = { at: target.lastErrorAt, message: `${what}: ${message}` };
      count();
      // Already waiting for a probe: the failure is noted, the back-off goes on as it was.
      if (phase === 'down' && timer !== null) return;
      const first = phase === 'up';
      phase = 'down';
      target.reachable = false;
      target.unreachableSince ??= iso();
      if (first) delayMs = firstMs;
      const waitMs = nextWait();
      const fields = { err: message, what, retryInMs: waitMs, changesWaiting: target.changesWaiting };
      if (first) logger.warn(fields, 'the target is unreachable: changes wait until it answers');
      else logger.warn(fields, 'the target failed again: waiting longer');
      arm(waitMs, probe);
      ctx.publish();
    },
    isDown: () => phase === 'down',
    fine() {
      // The snapshot outlives a config reload's new health: a cycle that went through clears it either way.
      if (phase !== 'up' || !target.reachable) {
        phase = 'up';
        target.reachable = true;
        target.unreachableSince = null;
        target.nextProbeAt = null;
      }
      if (timer === null) delayMs = firstMs;
    },
    settleLater() {
      if (phase === 'down') return;
      const waitMs = nextWait();
      snapshot.counters.retries++;
      logger.info({ retryInMs: waitMs }, 'outcomes left unknown: a cycle settles them after the back-off');
      arm(waitMs, () => {
        timer = null;
        target.nextProbeAt = null;
        o.resume();
      });
    },
    count,
    close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
