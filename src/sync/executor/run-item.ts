import { costOf } from '../../shared/plans.js';
import { deferredReason, overBudgetReason, REASON_CHANGED_SINCE_HASHED } from '../planner/reasons.js';
import type { PlanItem, RemoteStatus, RunItem, RunOutcome } from '../types.js';
import type { PaidResult } from './paid-ops.js';

/** A plan item as the run left it: its paid call's outcome, or why it was not sent. */

// Object.assign, not spread: `{ ...item, outcome }` takes V8's slow spread-with-extra-properties path
// for each of a large plan's items; Object.assign copies the same properties at a fraction of the cost.
export function runItemOf(
  item: PlanItem,
  paid: PaidResult | undefined,
  stillProcessing: RemoteStatus | undefined,
  reprocessedAfterWait = 0,
): RunItem {
  if (paid === undefined) {
    // Free decisions were recorded; deferred items were not run.
    const outcome: RunOutcome = item.action.startsWith('defer:') ? 'not-run' : 'done';
    return Object.assign({}, item, { outcome, creditsCharged: 0, error: null });
  }
  const { deferred } = paid;
  if (deferred !== undefined) {
    // Not called, and waiting for a later run: reported as deferred, with why.
    const action = item.action === 'reprocess' ? 'reprocess' : 'upload';
    if (deferred.by === 'stopped') {
      return Object.assign({}, item, {
        reason: `${item.reason}; not sent: the run stopped spending (${deferred.code})`,
        outcome: paid.outcome,
        creditsCharged: 0,
        error: null,
      });
    }
    if (deferred.by === 'unreachable') {
      return Object.assign({}, item, {
        reason: `${item.reason}; not sent: the target did not answer, nothing charged; sent when it answers`,
        outcome: paid.outcome,
        creditsCharged: 0,
        error: deferred.message,
      });
    }
    if (deferred.by === 'shared') {
      return Object.assign({}, item, {
        reason: `${item.reason}; not sent: ${deferred.message}`,
        outcome: paid.outcome,
        creditsCharged: 0,
        error: null,
      });
    }
    if (deferred.by === 'refused') {
      return Object.assign({}, item, {
        reason: `${item.reason}; refused by the service (${deferred.code}), nothing charged; sent again by the next run`,
        outcome: paid.outcome,
        creditsCharged: 0,
        error: null,
      });
    }
    const reason =
      deferred.by === 'budget'
        ? deferredReason(
            `at reservation: ${overBudgetReason(deferred.period, deferred.used, item.credits, deferred.cap, 0)}`,
            deferred.period,
            action,
            item.reason,
            item.credits > deferred.cap,
          )
        : REASON_CHANGED_SINCE_HASHED;
    const extra = deferred.by === 'budget' ? { deferredBy: deferred.period, deferredAction: action, cost: item.credits } : {};
    return Object.assign({}, item, extra, {
      action: deferred.by === 'budget' ? 'defer:over-budget' : 'defer:changing',
      reason,
      credits: 0,
      outcome: paid.outcome,
      creditsCharged: 0,
      error: null,
    }) as RunItem;
  }
  // A done upload now has a remote copy: report its id (the plan item only knew the previous copy's).
  const remoteId = paid.outcome === 'done' && paid.remoteId !== null ? paid.remoteId : item.remoteId;
  let reason = stillProcessing === undefined ? item.reason : `${item.reason}; remote status still ${stillProcessing} when --wait gave up`;
  // A reprocess --wait decided on was admitted against the budget like a planned call: it counts as planned.
  let credits = item.credits;
  if (reprocessedAfterWait > 0) {
    const each = costOf({ kind: 'reprocess' });
    credits += reprocessedAfterWait * each;
    reason = `${reason}; reprocessed ${reprocessedAfterWait} ${reprocessedAfterWait === 1 ? 'time' : 'times'} after --wait (${each} credits each)`;
  }
  return Object.assign({}, item, {
    reason,
    credits,
    remoteId,
    outcome: paid.outcome,
    creditsCharged: paid.creditsCharged,
    error: paid.error,
  });
}
