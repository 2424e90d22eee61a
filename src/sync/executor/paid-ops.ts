import { isApiError, type ApiError } from '../../client/errors.js';
import { DEFAULT_RETRY_AFTER_MS } from '../../client/retry.js';
import { errorText, isKbsyncError } from '../../shared/errors.js';
import type { BudgetCaps, NewOp, OutboxOp, ReserveResult, SettleOutcome, StateStore } from '../state/index.js';
import type { BudgetPeriod } from '../state/index.js';
import type { RunOutcome } from '../types.js';
import type { PaidQueue } from './paid-queue.js';

/** A paid call to make: the outbox row to write first, and the call itself. */
export type PaidTask = {
  op: NewOp;
  /** Makes the call; its result settles the op as done. Throws the client's ApiError otherwise. */
  perform(op: OutboxOp): Promise<Extract<SettleOutcome, { outcome: 'done' }>>;
  /** What else a done call records, in the transaction that settles it (an intelligence write's entries). */
  recordDone?(): void;
};

/** How one paid task ended. */
export type PaidResult = {
  outcome: RunOutcome;
  creditsCharged: number;
  remoteId: string | null;
  error: string | null;
  /**
   * Set when the work waits for a later run, nothing charged: the budget refused its reservation, the
   * file changed since it was hashed, the run stopped spending before the call, or the service refused
   * the call itself in a way that stops the run (out of credits, or a 429 not to be waited out).
   */
  deferred?:
    | { by: 'budget'; period: BudgetPeriod; used: number; cap: number }
    | { by: 'changed'; message: string }
    | { by: 'stopped'; code: string }
    | { by: 'shared'; message: string }
    | { by: 'refused'; code: string }
    | { by: 'unreachable'; message: string };
};

/**
 * Why the run stopped spending: the server refused us (auth, credits, tier, a 429 that retries did not
 * get past), it asked for a pause longer than upload.maxRetryAfterSeconds (`retry-after`), or it charged
 * more than the cost table said, so the budget checks made at reservation no longer hold; or the process
 * is shutting down (`shutdown`: `kbsync watch` got SIGTERM or SIGINT).
 */
export type StopReason = { by: 'service' | 'retry-after' | 'price' | 'shutdown' | 'unreachable'; code: string; message: string };

/** True when a stop says the target failed (unreachable, 5xx, a 429 storm), not us or the budget: waiting and trying again mends it. */
export function isTargetFault(stop: StopReason | null): boolean {
  return (
    stop !== null && (stop.by === 'unreachable' || stop.by === 'retry-after' || (stop.by === 'service' && stop.code === 'rate_limited'))
  );
}

export type PaidRunOptions = {
  state: StateStore;
  runId: number;
  caps: BudgetCaps;
  /** The run's one queue (paidQueue): every paid call of a run, uploads, reprocesses and the reindex, shares its limits and its pauses. */
  queue: PaidQueue;
  /** Longest Retry-After a call waits out (upload.maxRetryAfterSeconds); a longer one stops the run. */
  maxRetryAfterMs: number;
  onSettled?: (index: number, result: PaidResult) => void;
  /** Aborted when the process shuts down: calls in flight finish, no other starts (their work stays for the next run). */
  signal?: AbortSignal;
  /** The first call goes alone and the rest only once it is settled (a target that just came back is not sent a burst). */
  canary?: boolean;
};

/** Errors after which no further paid call is made in this run. */
const STOP_CODES = new Set(['unauthorized', 'insufficient_credits', 'tier_required', 'forbidden', 'mode_forbidden']);
/** Refusals that leave the work queued for the next run rather than failed: nothing was charged, nothing is wrong with the file. */
const DEFER_CODES = new Set(['insufficient_credits', 'rate_limited']);
/** Most times one call refused with 429 is sent again after its Retry-After. */
const MAX_RATE_LIMIT_RETRIES = 3;
/** Failures that say the call did not reach a working service (refused, DNS, unreachable, timed out before sending). */
const NOT_REACHED = new Set(['network', 'timeout']);
/** Calls in a row answered 5xx (outcome unknown) after which the run stops sending: the target is failing (one with no answer stops it at once). */
const UNKNOWN_IN_A_ROW_STOP = 2;

/** What one attempt of a task came to: settled for good, or to be sent again once its endpoint opens. */
type Attempt = 'settled' | 'again';

/**
 * Runs paid calls through the run's queue. For each task: a durable outbox row (reusing a pending row
 * for the same operation, so a retry keeps its idempotency key), then a reservation admitted against
 * every budget period in one transaction, then the call, then its outcome recorded. Nothing is paid
 * without the row and the reservation committed first.
 *
 * A 429 is a refusal (nothing charged): its reservation is released, the endpoint's lane of the queue
 * pauses for the Retry-After (calls already sent finish, no other call to that endpoint starts, and the
 * calls waiting hold no slot), and the call goes again, with a new row, when the pause ends. A Retry-After
 * longer than maxRetryAfterMs stops the run instead, its work left for the next run.
 */
export async function runPaidTasks(
  tasks: readonly PaidTask[],
  o: PaidRunOptions,
): Promise<{ results: PaidResult[]; stop: StopReason | null }> {
  const { state, queue } = o;
  // enqueue() returns the open row for the same work if there is one (a retry keeps its idempotency key).
  // Object.assign, not spread: V8's spread of an object plus a property is slow over a first sync's ops (see runItemOf).
  const opIds = state.enqueueMany(tasks.map((task) => Object.assign({}, task.op, { runId: o.runId })));
  const results: PaidResult[] = tasks.map(() => ({ outcome: 'not-run', creditsCharged: 0, remoteId: null, error: null }));
  let stop: StopReason | null = null;
  // Aborted at the stop: calls waiting out a pause give up at once.
  const stopped = new AbortController();
  const stopWith = (reason: StopReason): void => {
    if (stop !== null) return;
    stop = reason;
    stopped.abort();
  };
  if (o.signal !== undefined) {
    const shutdown = (): void =>
      stopWith({ by: 'shutdown', code: 'shutdown', message: 'kbsync is shutting down: calls in flight finish, no other paid call starts' });
    if (o.signal.aborted) shutdown();
    else o.signal.addEventListener('abort', shutdown, { once: true });
  }
  const notSent = (code: string): PaidResult => ({
    outcome: 'not-run',
    creditsCharged: 0,
    remoteId: null,
    error: null,
    deferred: stop?.by === 'unreachable' ? { by: 'unreachable', message: stop.message } : { by: 'stopped', code },
  });

  // 429s each task got from the service (not the calls the client held back unsent).
  const refusals = new Map<number, number>();
  // Calls in a row whose outcome is unknown (no answer, a 5xx): past a few, the target is failing.
  let unknownInARow = 0;
  const unreachable = (err: ApiError): void =>
    stopWith({
      by: 'unreachable',
      code: err.code,
      message: `the target did not answer (${err.message}); no further paid call in this run, the rest stays queued and is sent when it answers`,
    });

  const attempt = async (index: number): Promise<Attempt> => {
    const task = tasks[index] as PaidTask;
    const opId = opIds[index] as number;
    if (stop !== null) {
      results[index] = notSent(stop.code);
      return 'settled';
    }
    const admitted = await reserveShared(state, opId, o, stopped.signal);
    if (!admitted.ok && admitted.period === 'content') {
      if (admitted.reused !== null) {
        // Another runner of the dataset bought this content: the op is settled, tracked against that copy, nothing paid.
        results[index] = { outcome: 'done', creditsCharged: 0, remoteId: admitted.reused.remoteId, error: null };
        return 'settled';
      }
      state.cancelOp(opId, 'another runner is buying the same content; left for the next run');
      results[index] = {
        outcome: 'not-run',
        creditsCharged: 0,
        remoteId: null,
        error: null,
        deferred: { by: 'shared', message: 'another runner of this dataset is buying the same content; not bought twice' },
      };
      return 'settled';
    }
    if (!admitted.ok) {
      state.cancelOp(opId, `over budget: ${admitted.period} cap ${admitted.cap}, ${admitted.used} used`);
      results[index] = {
        outcome: 'not-run',
        creditsCharged: 0,
        remoteId: null,
        error: null,
        deferred: { by: 'budget', period: admitted.period, used: admitted.used, cap: admitted.cap },
      };
      return 'settled';
    }
    const op = state.getOp(opId) as OutboxOp;
    try {
      const done = await task.perform(op);
      if (task.recordDone === undefined) state.settle(opId, done);
      else
        state.transaction(() => {
          state.settle(opId, done);
          task.recordDone?.();
        });
      const charged = done.creditsCharged ?? op.credits;
      unknownInARow = 0;
      results[index] = { outcome: 'done', creditsCharged: charged, remoteId: done.remoteId ?? null, error: null };
      if (charged > op.credits) stopWith(overcharged(op, charged));
      return 'settled';
    } catch (err) {
      if (isKbsyncError(err, 'file_changed')) {
        // Checked before anything was sent: the reservation is released and the file waits for the next pass.
        state.settle(opId, { outcome: 'failed', code: err.code, error: err.message });
        results[index] = {
          outcome: 'not-run',
          creditsCharged: 0,
          remoteId: null,
          error: null,
          deferred: { by: 'changed', message: err.message },
        };
        return 'settled';
      }
      if (!isApiError(err)) {
        // Not an answer from the server (a local file vanished, a bug): nothing was charged for sure
        // only if nothing was sent; the client raises ApiError for everything it sent, so this was not.
        state.settle(opId, { outcome: 'failed', code: 'local_error', error: errorText(err) });
        results[index] = { outcome: 'failed', creditsCharged: 0, remoteId: null, error: errorText(err) };
        return 'settled';
      }
      if (err.code === 'unknown_outcome') {
        state.settle(opId, { outcome: 'unknown', code: err.code, error: err.message });
        results[index] = { outcome: 'unknown', creditsCharged: 0, remoteId: null, error: err.message };
        // Timed out waiting for an answer: the target hangs, and no other call is sent into it. A reset
        // or a 5xx may be one bad moment: two in a row stop the run.
        if (timedOut(err) || ++unknownInARow >= (o.canary === true ? 1 : UNKNOWN_IN_A_ROW_STOP)) unreachable(err);
        return 'settled';
      }
      if (NOT_REACHED.has(err.code)) {
        // Not sent: nothing charged and nothing wrong with the file. The refused row is settled (its
        // reservation released) and the work waits in a new pending row, as a call the stop kept back.
        state.settle(opId, { outcome: 'failed', code: err.code, error: err.message });
        opIds[index] = state.enqueue(Object.assign({}, task.op, { runId: o.runId }));
        results[index] = {
          outcome: 'not-run',
          creditsCharged: 0,
          remoteId: null,
          error: null,
          deferred: { by: 'unreachable', message: err.message },
        };
        unreachable(err);
        return 'settled';
      }
      // A definite answer: the call was refused (or, status null, not sent), so its reservation is released.
      state.settle(opId, { outcome: 'failed', code: err.code, error: err.message });
      if (err.code === 'rate_limited') return rateLimited(index, op, err);
      if (DEFER_CODES.has(err.code)) {
        results[index] = {
          outcome: 'not-run',
          creditsCharged: 0,
          remoteId: null,
          error: null,
          deferred: { by: 'refused', code: err.code },
        };
      } else {
        results[index] = { outcome: 'failed', creditsCharged: 0, remoteId: null, error: err.message };
      }
      // The stop takes the calls not yet started out of the queue; each reports itself not sent.
      if (STOP_CODES.has(err.code)) stopWith({ by: 'service', code: err.code, message: err.message });
      return 'settled';
    }
  };

  /** A 429 (or a call the client held back inside its endpoint's window): pause the lane and go again, or stop the run. */
  const rateLimited = (index: number, op: OutboxOp, err: ApiError): Attempt => {
    const task = tasks[index] as PaidTask;
    const waitMs = err.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    const refused = (): Attempt => {
      results[index] = { outcome: 'not-run', creditsCharged: 0, remoteId: null, error: null, deferred: { by: 'refused', code: err.code } };
      return 'settled';
    };
    if (stop !== null) return refused();
    if (waitMs > o.maxRetryAfterMs) {
      stopWith({
        by: 'retry-after',
        code: err.code,
        message: `the service asked for no ${op.kind} calls for ${formatSeconds(waitMs)} (429 Retry-After), longer than upload.maxRetryAfterSeconds (${formatSeconds(o.maxRetryAfterMs)}); no further paid call in this run, the rest stays queued for the next run`,
      });
      return refused();
    }
    // status null: the client did not send it (its endpoint's window was still open); not a refusal.
    const times = (refusals.get(index) ?? 0) + (err.status === null ? 0 : 1);
    refusals.set(index, times);
    if (times > MAX_RATE_LIMIT_RETRIES) {
      stopWith({ by: 'service', code: err.code, message: `${err.message} (refused ${times} times, each Retry-After waited out)` });
      return refused();
    }
    queue.pause(task.op.kind, queue.now() + waitMs);
    // A new row for the next attempt: the refused one is settled, with nothing charged.
    opIds[index] = state.enqueue(Object.assign({}, task.op, { runId: o.runId }));
    return 'again';
  };

  // A task that threw could not write its record (a full disk, a lost state): no other call starts (the
  // stop is set before its slot frees), and the run fails only once every call in flight has settled.
  let broken: { err: unknown } | null = null;
  const fail = (err: unknown): never => {
    broken ??= { err };
    stopWith({ by: 'shutdown', code: 'state_write_failed', message: errorText(err) });
    throw err;
  };

  const runOne = async (index: number): Promise<void> => {
    const lane = (tasks[index] as PaidTask).op.kind;
    for (;;) {
      // In admission order (index): a call sent again keeps its place among those waiting.
      const r = await queue.run(lane, () => attempt(index).catch(fail), { signal: stopped.signal, order: index });
      if (!r.ran) {
        // The run stopped before this call started (it may have been waiting out its endpoint's pause).
        results[index] = notSent((stop as StopReason | null)?.code ?? 'stopped');
        return;
      }
      if (r.value === 'settled') return;
    }
  };
  const settleOne = async (index: number): Promise<void> => {
    try {
      await runOne(index);
    } catch {
      return; // its failure is `broken`, thrown once every call has settled
    }
    o.onSettled?.(index, results[index] as PaidResult);
  };
  const first = o.canary === true && tasks.length > 1 ? 1 : 0;
  if (first === 1) await settleOne(0);
  await Promise.all(tasks.slice(first).map((_, i) => settleOne(i + first)));
  if (broken !== null) throw (broken as { err: unknown }).err;
  return { results, stop };
}

/** True for a call that got no answer in time (undici's headers or body timeout), not one cut short or refused. */
function timedOut(err: ApiError): boolean {
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return err.status === null && (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT');
}

/** How long an upload waits for another runner buying the same content (PostgreSQL state) before it is left for the next run. */
const SHARED_CONTENT_WAIT_MS = 10_000;
const SHARED_CONTENT_POLL_MS = 200;

/**
 * reserve(), waiting while another live runner holds the claim on the same content (PostgreSQL state):
 * its outcome decides, reused when it is bought, claimed by this op when it failed. A dead runner's
 * claim is not waited for (the next runner of its sources reconciles it). The SQLite state never
 * answers 'content'.
 */
async function reserveShared(state: StateStore, opId: number, o: PaidRunOptions, stop: AbortSignal): Promise<ReserveResult> {
  const until = Date.now() + SHARED_CONTENT_WAIT_MS;
  for (;;) {
    const admitted = state.reserve(opId, o.caps, o.runId);
    if (admitted.ok || admitted.period !== 'content' || admitted.reused !== null || !admitted.holderAlive) return admitted;
    if (Date.now() >= until || stop.aborted) return admitted;
    await new Promise((resolve) => setTimeout(resolve, SHARED_CONTENT_POLL_MS));
  }
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * The stop after a charge above the planned cost (the service prices differently from docs/api.md's table,
 * which the planner and every reservation use): calls already in flight finish, no other starts, so
 * the budget is overshot by at most what was in flight. The real charge is in the ledger.
 */
function overcharged(op: OutboxOp, charged: number): StopReason {
  const what = op.path === null ? op.kind : `${op.kind} of ${op.path}`;
  return {
    by: 'price',
    code: 'charged_above_plan',
    message: `the service charged ${charged} credits for the ${what}, planned at ${op.credits} (docs/api.md's prices; uploads per target.uploadCost); no further paid call in this run (the real charge is recorded). If the service prices uploads otherwise, set target.uploadCost`,
  };
}
