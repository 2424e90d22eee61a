import { formatCount, plural } from '../planner/format.js';
import type { BudgetPeriod, PlanTotals, ReindexDecision, SyncPlan } from '../types.js';
import { columns, displayPath, hasSeveralSources } from './columns.js';

export type FormatOptions = {
  /** List skip:unchanged items too (a large tree has thousands). @default false */
  showUnchanged?: boolean;
};

/** A plan for people: one aligned line per item (action, credits, path, reason), then totals, budget and reindex lines. */
export function formatPlan(plan: SyncPlan, opts: FormatOptions = {}): string {
  const multi = hasSeveralSources(plan.items);
  const shown = opts.showUnchanged ? plan.items : plan.items.filter((i) => i.action !== 'skip:unchanged');
  const lines = columns(
    shown.map((i) => [i.action, String(i.credits), displayPath(i, multi), i.reason]),
    ['left', 'right', 'left', 'left'],
  );
  const hidden = plan.items.length - shown.length;
  if (hidden > 0) lines.push(`(${plural(hidden, 'unchanged file')} not listed)`);
  if (plan.items.length === 0) lines.push('nothing to sync');
  lines.push('', totalsLine(plan.totals, 'plan'), budgetLine(plan), reindexLine(plan.reindex));
  return lines.join('\n');
}

/** "3 to upload, 10 unchanged, 1 renamed, 2 skipped, 1 deferred, 0 failed; 17 credits planned". */
export function totalsLine(t: PlanTotals, kind: 'plan' | 'run'): string {
  const counts = [
    kind === 'plan' ? `${formatCount(t.uploaded)} to upload` : `${formatCount(t.uploaded)} uploaded`,
    `${formatCount(t.unchanged)} unchanged`,
    `${formatCount(t.renamed)} renamed`,
    `${formatCount(t.skipped)} skipped`,
    `${formatCount(t.deferred)} deferred`,
    `${formatCount(t.failed)} failed`,
  ].join(', ');
  const credits =
    kind === 'plan'
      ? `${plural(t.creditsPlanned, 'credit')} planned`
      : `${plural(t.creditsSpent, 'credit')} spent (${formatCount(t.creditsPlanned)} planned)`;
  return `${counts}; ${credits}`;
}

/** "budget: run 0 + 17 of 500, day 1,200 + 17 of 2,000, month 9,000 + 17 of 20,000". */
export function budgetLine(plan: Pick<SyncPlan, 'budget'>): string {
  const { caps, used, planned } = plan.budget;
  const periods: BudgetPeriod[] = ['run', 'day', 'month'];
  const parts = periods.map((p) => `${p} ${formatCount(used[p])} + ${formatCount(planned)} of ${formatCount(caps[p])}`);
  return `budget (used + this plan of cap): ${parts.join(', ')}`;
}

/** "reindex: yes, 2 credits (25 changed files ...)" or why not. */
export function reindexLine(r: ReindexDecision): string {
  if (r.wanted && r.allowed) return `reindex: yes, ${plural(r.credits, 'credit')}: ${r.reason}`;
  if (r.wanted) return `reindex: wanted, not attempted: ${r.reason}`;
  return `reindex: not needed: ${r.reason}`;
}

