import type { PlanAction, PlanItem, PlanTotals, RunOutcome } from '../types.js';

/** Which summary count a planned action lands in. */
export type TotalsBucket = 'uploaded' | 'unchanged' | 'renamed' | 'skipped' | 'deferred' | 'failed';

/** The summary bucket of each action (every item lands in exactly one). */
export const ACTION_BUCKET: Record<PlanAction, TotalsBucket> = {
  upload: 'uploaded',
  reprocess: 'uploaded',
  'skip:unchanged': 'unchanged',
  rename: 'renamed',
  reuse: 'renamed',
  'skip:empty': 'skipped',
  'skip:duplicate-content': 'skipped',
  'skip:unsupported': 'skipped',
  'skip:too-large': 'skipped',
  'skip:ignored': 'skipped',
  'skip:secret': 'skipped',
  'skip:unreadable': 'skipped',
  'skip:bad-name': 'skipped',
  'skip:encrypted': 'skipped',
  'skip:no-text': 'skipped',
  'skip:convert-failed': 'skipped',
  deleted: 'skipped',
  'defer:over-budget': 'deferred',
  'defer:changing': 'deferred',
  'skip:remote-failed': 'failed',
};

/** Every action with a zero count, in a fixed order (for tables and `counts`). */
export function emptyCounts(): Record<PlanAction, number> {
  const counts = {} as Record<PlanAction, number>;
  for (const action of Object.keys(ACTION_BUCKET) as PlanAction[]) counts[action] = 0;
  return counts;
}

/** The bucket of an item: its action's, except that a run's paid calls count by how they ended. */
export function bucketOf(item: { action: PlanAction; outcome?: RunOutcome }): TotalsBucket {
  const bucket = ACTION_BUCKET[item.action];
  if (bucket !== 'uploaded' || item.outcome === undefined || item.outcome === 'done') return bucket;
  return item.outcome === 'not-run' ? 'deferred' : 'failed';
}

/**
 * A plan's summary and its count per action, in one pass over its items (a plan has no outcomes
 * and no charges: creditsSpent is 0). The same totals as summarize(items, { credits: reindexCredits }).
 */
export function tallyPlan(items: readonly PlanItem[], reindexCredits: number): { totals: PlanTotals; counts: Record<PlanAction, number> } {
  const totals = noTotals(reindexCredits, 0);
  const counts = emptyCounts();
  // Most items of a large plan are unchanged: counted apart (a comparison with a constant), as a keyed
  // update of `counts` per item looks the name up, several times slower over a large plan.
  let unchanged = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as PlanItem;
    if (item.action === 'skip:unchanged') unchanged += 1;
    else counts[item.action] += 1;
    totals.creditsPlanned += item.credits;
  }
  counts['skip:unchanged'] += unchanged;
  for (const action of Object.keys(counts) as PlanAction[]) totals[ACTION_BUCKET[action]] += counts[action];
  return { totals, counts };
}

/**
 * The `--json` summary of planned or finished items. creditsPlanned is the items' planned credits
 * plus the reindex's; creditsSpent sums `creditsCharged` (0 in a plan).
 */
export function summarize(
  items: readonly (PlanItem & { outcome?: RunOutcome; creditsCharged?: number })[],
  reindex: { credits: number; creditsCharged?: number },
): PlanTotals {
  const totals = noTotals(reindex.credits, reindex.creditsCharged ?? 0);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as PlanItem & { outcome?: RunOutcome; creditsCharged?: number };
    totals[bucketOf(item)] += 1;
    totals.creditsPlanned += item.credits;
    totals.creditsSpent += item.creditsCharged ?? 0;
  }
  return totals;
}

/** Totals of no item yet: what the reindex planned and was charged. */
function noTotals(creditsPlanned: number, creditsSpent: number): PlanTotals {
  return { uploaded: 0, unchanged: 0, renamed: 0, skipped: 0, deferred: 0, failed: 0, creditsPlanned, creditsSpent };
}
