import { extensionOf } from '../../shared/file-types.js';
import { formatCount, plural } from '../planner/format.js';
import type { BudgetPeriod, PlanItem, PlanTotals, ReindexDecision, SyncPlan } from '../types.js';
import { columnChunks, columnChunksOf, displayPath, hasSeveralSources, type Align } from './columns.js';
import { asPlanItem, withUnlisted, type UnlistedRows } from '../planner/unlisted.js';
import { entryLines } from './format-entries.js';

export type FormatOptions = {
  /**
   * List every item: unchanged files (a large tree has thousands) and each unsupported file even
   * when there are more than MAX_UNSUPPORTED_LISTED. @default false
   */
  showUnchanged?: boolean;
  /**
   * The rows of the unchanged files a plan or run counted without listing (see UnlistedRows): counted
   * in the reports' note; a plan's report with `showUnchanged` lists them too (a run that lists all
   * is made with nothing counted).
   */
  unlisted?: UnlistedRows | null;
};

/** Up to this many unsupported files are listed one per line; more are counted by file type (a docs tree full of images). */
export const MAX_UNSUPPORTED_LISTED = 50;

/** A plan for people: one aligned line per item (action, credits, path, reason), then totals, budget and reindex lines. */
export function formatPlan(plan: SyncPlan, opts: FormatOptions = {}): string {
  return [...formatPlanChunks(plan, opts)].join('').slice(0, -1);
}

/** formatPlan's text with a final newline, in chunks to write one after the other: a large plan's lines are never all held at once. */
export function* formatPlanChunks(plan: SyncPlan, opts: FormatOptions = {}): Generator<string> {
  // A delta plan's unchanged files are only counted: the lines are the full plan's all the same.
  const unlisted = plan.unchangedNotListed ?? 0;
  const rows = opts.unlisted ?? null;
  const multi = hasSeveralSources(plan.items, rows?.sources);
  const cells = (i: PlanItem): string[] => [i.action, String(i.credits), displayPath(i, multi), i.reason];
  const align: Align[] = ['left', 'right', 'left', 'left'];
  let notes: string[];
  if (opts.showUnchanged === true && rows !== null) {
    // Every item, the counted unchanged files' made from their rows as the lines are laid out.
    yield* columnChunksOf(() => withUnlisted(plan.items, rows, asPlanItem), cells, align);
    notes = [];
  } else {
    const list = listed(plan.items, opts, unlisted);
    yield* columnChunks(list.shown, cells, align);
    notes = list.notes;
  }
  const lines = notes;
  if (plan.items.length + unlisted === 0 && plan.intelligence === undefined) lines.push('nothing to sync');
  if (plan.intelligence !== undefined) lines.push(...entryLines(plan.intelligence, 'plan', opts.showUnchanged === true));
  lines.push('', totalsLine(plan.totals, 'plan'), budgetLine(plan), reindexLine(plan.reindex));
  yield `${lines.join('\n')}\n`;
}

/**
 * The items a report lists one per line, and a line for each kind left out: unchanged files, and
 * unsupported files past MAX_UNSUPPORTED_LISTED (counted by type). `showUnchanged` lists all.
 */
export function listed<T extends PlanItem>(
  items: readonly T[],
  opts: FormatOptions,
  unlisted = 0,
): { shown: readonly T[]; notes: string[] } {
  if (opts.showUnchanged === true) return { shown: items, notes: [] };
  // Indexed loops, here and in byType: a for-of over 100k items allocates a result object per item
  // in code run once (never optimized). One pass over all items: the rest of the work
  // is on the items other than unchanged (in an unchanged tree, a fraction of them).
  let unsupported = 0;
  const kept: T[] = [];
  for (let k = 0; k < items.length; k++) {
    const item = items[k] as T;
    if (item.action === 'skip:unchanged') continue;
    if (item.action === 'skip:unsupported') unsupported += 1;
    kept.push(item);
  }
  const fold = unsupported > MAX_UNSUPPORTED_LISTED;
  const shown = fold ? kept.filter((i) => i.action !== 'skip:unsupported') : kept;
  const unchanged = items.length - kept.length + unlisted;
  const notes: string[] = [];
  if (fold) notes.push(`(${plural(unsupported, 'unsupported file')} not listed: ${byType(kept)}; --all lists them)`);
  if (unchanged > 0) notes.push(`(${plural(unchanged, 'unchanged file')} not listed)`);
  return { shown, notes };
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

/** "6,295 .pdf, 6,257 .png, 1 with no extension": the unsupported items counted by extension, most first. */
function byType(items: readonly PlanItem[]): string {
  const counts = new Map<string, number>();
  for (let k = 0; k < items.length; k++) {
    const i = items[k] as PlanItem;
    if (i.action !== 'skip:unsupported') continue;
    const extension = extensionOf(i.path);
    const type = extension === '' ? 'with no extension' : `.${extension}`;
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([type, n]) => `${formatCount(n)} ${type}`)
    .join(', ');
}
