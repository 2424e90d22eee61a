import { isApiError } from '../../client/errors.js';
import { errorText, KbsyncError } from '../../shared/errors.js';
import { costOf, type SinglePaidKind } from '../../shared/plans.js';
import { overBudgetReason } from '../planner/reasons.js';
import type { BudgetCaps, StateStore } from '../state/index.js';

/** A paid call made on its own, outside a sync: a query (or a batch of them), a chat, an agent's creation or config. */
export type SinglePaidCall<T> = {
  kind: SinglePaidKind;
  /** What it costs when not its kind's price: a batch query costs 1 per question (shared/plans.ts, `query_batch`). */
  credits?: number;
  /** What the ledger and `kbsync status` show for it (the question, shortened). */
  reason: string;
  /**
   * Makes the call with the op's idempotency key; what it answers, the charge if the service says, and the
   * id of what it made (an agent's, kept in the ledger) if any.
   */
  perform(idempotencyKey: string): Promise<{ value: T; creditsCharged: number | null; remoteId?: string | null }>;
  /**
   * When the outcome is unknown, looks (with free calls) whether the call took effect: its result when it
   * did (the op is settled done, charged, and the command goes on). Null, a throw, or no such check (a query,
   * a chat: nothing to look at) leave the outcome unknown: its reservation stays (the next sync takes it as
   * charged), since a call still running on the service may yet take effect.
   */
  verifyUnknown?(): Promise<{ value: T; remoteId: string | null } | null>;
};

const REASON_MAX = 200;

/**
 * Makes one query or chat the way a sync makes its calls: an outbox row and a reservation admitted
 * against the run, day and month caps, committed before the call; the outcome recorded after. Over
 * budget, nothing is sent and `budget_exhausted` is thrown (exit 3). A call the service refused
 * releases its reservation and rethrows; one whose outcome is unknown is looked for (verifyUnknown) and,
 * when not found, keeps its reservation until the next sync takes it as charged (nothing can be checked
 * for a query or a chat). With `o.runId`, the call counts in that run (its cap included), which the
 * caller starts and finishes.
 */
export async function paidCall<T>(state: StateStore, caps: BudgetCaps, call: SinglePaidCall<T>, o: { runId?: number } = {}): Promise<T> {
  // A caller's run (`kbsync check`: several calls, one run cap) is the caller's to finish.
  const ownRun = o.runId === undefined;
  const runId = o.runId ?? state.startRun(call.kind);
  const credits = call.credits ?? costOf({ kind: call.kind });
  const reason = call.reason.length > REASON_MAX ? `${call.reason.slice(0, REASON_MAX - 1)}…` : call.reason;
  try {
    const opId = state.enqueue({ kind: call.kind, credits, reason, runId });
    const admitted = state.reserve(opId, caps, runId);
    if (!admitted.ok) {
      // A query or chat carries no content to share: only a budget period can refuse it.
      if (admitted.period === 'content') throw new KbsyncError('state_conflict', `${call.kind} ${opId} refused as shared content`);
      const check = overBudgetReason(admitted.period, admitted.used, credits, admitted.cap, 0);
      state.cancelOp(opId, `over budget: ${check}`);
      throw new KbsyncError('budget_exhausted', `${call.kind} not sent: it ${check}`);
    }
    const op = state.getOp(opId);
    if (op === null) throw new KbsyncError('state_conflict', `operation ${opId} vanished after its reservation`);
    let result: { value: T; creditsCharged: number | null; remoteId?: string | null };
    try {
      result = await call.perform(op.idempotencyKey);
    } catch (err) {
      if (!isApiError(err) || err.code !== 'unknown_outcome') {
        state.settle(opId, { outcome: 'failed', code: isApiError(err) ? err.code : 'local_error', error: errorText(err) });
        throw err;
      }
      const found = await verify(call);
      if (found === null) {
        state.settle(opId, { outcome: 'unknown', code: err.code, error: err.message });
        throw err;
      }
      result = { value: found.value, creditsCharged: null, remoteId: found.remoteId };
    }
    state.settle(opId, { outcome: 'done', creditsCharged: result.creditsCharged, remoteId: result.remoteId ?? null });
    if (ownRun) state.finishRun(runId, 'done', { kind: call.kind, credits: result.creditsCharged ?? credits });
    return result.value;
  } catch (err) {
    if (ownRun) state.finishRun(runId, 'failed', { error: errorText(err) });
    throw err;
  }
}

/** verifyUnknown's answer; null when there is none, it found nothing, or it failed (the outcome stays unknown). */
async function verify<T>(call: SinglePaidCall<T>): Promise<{ value: T; remoteId: string | null } | null> {
  if (call.verifyUnknown === undefined) return null;
  try {
    return await call.verifyUnknown();
  } catch {
    // The check failed too (the service is still away).
    return null;
  }
}
