import type { BudgetPeriod, BudgetWindow, PlanItem } from '../types.js';
import { compareByPath } from '../tracked/keys.js';
import { deferredReason, duplicateDeferredReason, overBudgetReason, sharedText } from './reasons.js';

const PERIODS: readonly BudgetPeriod[] = ['run', 'day', 'month'];

/** The first period whose cap `used + extra + cost` would pass, with the figures, or null when all fit. */
export type BudgetBlock = { period: BudgetPeriod; committed: number; cost: number; cap: number };

/** Checks `used + extra + cost <= cap` for run, day and month, in that order. */
export function blockingPeriod(budget: BudgetWindow, extra: number, cost: number): BudgetBlock | null {
  for (const period of PERIODS) {
    const committed = budget.used[period] + extra;
    if (committed + cost > budget.caps[period]) return { period, committed, cost, cap: budget.caps[period] };
  }
  return null;
}

/** Paid items (upload, reprocess) in admission order: smallest cost first, so the most files fit; then by path. */
export function admissionOrder(paid: PlanItem[]): PlanItem[] {
  return paid.sort((a, b) => (a.cost ?? a.credits) - (b.cost ?? b.credits) || compareByPath(a, b));
}

/** The outcome of admitting paid items against the budget. */
export type Admission = {
  /** Aligned with the ordered paid items: null when admitted, else what stopped it. */
  blocks: (BudgetBlock | null)[];
  admittedCount: number;
  admittedCredits: number;
};

/**
 * Admits paid items in order while every period stays within its cap, with `reserved` credits
 * already set aside (for the reindex). A forecast: the executor re-checks each item when it
 * reserves credits in the state database.
 */
export function admit(ordered: readonly PlanItem[], budget: BudgetWindow, reserved: number): Admission {
  const blocks: (BudgetBlock | null)[] = [];
  let admittedCount = 0;
  let admittedCredits = 0;
  for (const item of ordered) {
    const cost = item.cost ?? item.credits;
    const block = blockingPeriod(budget, reserved + admittedCredits, cost);
    blocks.push(block);
    if (block === null) {
      admittedCount += 1;
      admittedCredits += cost;
    }
  }
  return { blocks, admittedCount, admittedCredits };
}

/**
 * Turns the blocked items into `defer:over-budget` (0 credits, with the period and the check),
 * and the in-run duplicates of a deferred upload with them. Mutates the plan's own items.
 */
export function applyAdmission(ordered: readonly PlanItem[], admission: Admission, reserved: number, all: readonly PlanItem[]): void {
  const deferredBySha = new Map<string, { check: string; period: BudgetPeriod }>();
  ordered.forEach((item, i) => {
    const block = admission.blocks[i];
    if (block === undefined || block === null) return;
    const action = item.action === 'reprocess' ? 'reprocess' : 'upload';
    const check = overBudgetReason(block.period, block.committed, block.cost, block.cap, reserved);
    item.reason = sharedText(deferredReason(check, block.period, action, item.reason, block.cost > block.cap));
    item.action = 'defer:over-budget';
    item.credits = 0;
    item.deferredBy = block.period;
    item.deferredAction = action;
    if (action === 'upload' && item.sha256 !== null) deferredBySha.set(item.sha256, { check, period: block.period });
  });
  if (deferredBySha.size === 0) return;
  for (const item of all) {
    if (item.action !== 'skip:duplicate-content' || item.duplicateOf?.inThisRun !== true || item.sha256 === null) continue;
    const primary = deferredBySha.get(item.sha256);
    if (primary === undefined) continue;
    item.action = 'defer:over-budget';
    item.reason = sharedText(duplicateDeferredReason(item.duplicateOf.name, primary.check));
    item.deferredBy = primary.period;
  }
}
