import { costOf, isAdvancedPlan, type Plan } from '../../shared/plans.js';
import type { BudgetWindow, PlanItem, ReindexDecision } from '../types.js';
import { admit, blockingPeriod, type Admission } from './budget.js';
import { overBudgetReason, reindexReason } from './reasons.js';

/** The admission of the paid items together with the reindex decision it allows. */
export type BudgetedPlan = { admission: Admission; reserved: number; reindex: ReindexDecision };

/**
 * Admits the paid items and decides the reindex. When a reindex could be wanted (Advanced tier,
 * enough candidates, room for its 2 credits) they are set aside first, so a bulk change that
 * fills the budget still ends with its reindex; if fewer files than the threshold get admitted
 * that way, the admission is redone without the reservation (no credits held for nothing).
 */
export function budgetPlan(ordered: readonly PlanItem[], budget: BudgetWindow, plan: Plan, minChangedFiles: number): BudgetedPlan {
  const cost = costOf({ kind: 'reindex' });
  const tierOk = isAdvancedPlan(plan);
  const decide = (changed: number, blockedBy: ReindexDecision['blockedBy'], budgetReason = ''): ReindexDecision => {
    const wanted = changed >= minChangedFiles;
    const allowed = blockedBy === null;
    return {
      wanted,
      allowed,
      blockedBy,
      reason: reindexReason(changed, minChangedFiles, plan, blockedBy, budgetReason),
      credits: wanted && allowed ? cost : 0,
      changedFiles: changed,
      minChangedFiles,
    };
  };

  if (tierOk && ordered.length >= minChangedFiles && blockingPeriod(budget, 0, cost) === null) {
    const reservedPass = admit(ordered, budget, cost);
    if (reservedPass.admittedCount >= minChangedFiles) {
      return { admission: reservedPass, reserved: cost, reindex: decide(reservedPass.admittedCount, null) };
    }
  }
  const admission = admit(ordered, budget, 0);
  const changed = admission.admittedCount;
  if (!tierOk) return { admission, reserved: 0, reindex: decide(changed, 'tier') };
  if (changed < minChangedFiles) return { admission, reserved: 0, reindex: decide(changed, null) };
  const block = blockingPeriod(budget, admission.admittedCredits, cost);
  if (block === null) return { admission, reserved: 0, reindex: decide(changed, null) };
  const why = overBudgetReason(block.period, block.committed, block.cost, block.cap, 0);
  return { admission, reserved: 0, reindex: decide(changed, block.period, why) };
}
