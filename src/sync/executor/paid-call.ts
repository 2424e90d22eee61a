import { isApiError } from '../../client/errors.js';
import { errorText, KbsyncError } from '../../shared/errors.js';
import { costOf } from '../../shared/plans.js';
import { overBudgetReason } from '../planner/reasons.js';
import type { BudgetCaps, StateStore } from '../state/index.js';

/** A paid call made on its own, outside a sync: a query or a chat. */
export type SinglePaidCall<T> = {
  kind: 'query' | 'chat';
  /** What the ledger and `kbsync status` show for it (the question, shortened). */
  reason: string;
  /** Makes the call with the op's idempotency key; what it answers, and the charge if the service says. */
  perform(idempotencyKey: string): Promise<{ value: T; creditsCharged: number | null }>;
};

const REASON_MAX = 200;

/**
 * Makes one query or chat the way a sync makes its calls: an outbox row and a reservation admitted
 * against the run, day and month caps, committed before the call; the outcome recorded after. Over
 * budget, nothing is sent and `budget_exhausted` is thrown (exit 3). A call the service refused
 * releases its reservation and rethrows; one whose outcome is unknown keeps it until the next sync
 * takes it as charged (nothing can be checked for a query).
 */
export async function paidCall<T>(state: StateStore, caps: BudgetCaps, call: SinglePaidCall<T>): Promise<T> {
  const runId = state.startRun(call.kind);
  const credits = costOf({ kind: call.kind });
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
    let result: { value: T; creditsCharged: number | null };
    try {
      result = await call.perform(op.idempotencyKey);
    } catch (err) {
      if (isApiError(err) && err.code === 'unknown_outcome') state.settle(opId, { outcome: 'unknown', code: err.code, error: err.message });
      else state.settle(opId, { outcome: 'failed', code: isApiError(err) ? err.code : 'local_error', error: errorText(err) });
      throw err;
    }
    state.settle(opId, { outcome: 'done', creditsCharged: result.creditsCharged });
    state.finishRun(runId, 'done', { kind: call.kind, credits: result.creditsCharged ?? credits });
    return result.value;
  } catch (err) {
    state.finishRun(runId, 'failed', { error: errorText(err) });
    throw err;
  }
}
