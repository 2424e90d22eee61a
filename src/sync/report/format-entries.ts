import { formatCount, plural } from '../planner/format.js';
import type { EntryItem, IntelPlan } from '../types.js';
import { columns } from './columns.js';

/**
 * The intelligence entries of a plan or a run, for people: a heading with how they are sent, one
 * aligned line per entry (unchanged ones counted unless `all`), and their totals.
 */
export function entryLines(intel: IntelPlan, kind: 'plan' | 'run', all: boolean): string[] {
  const mode = intel.mode === 'batch' ? 'batches of up to 50 (Advanced tier)' : 'one write per entry (batches need the Advanced tier)';
  const lines = ['', `intelligence entries, ${mode}:`];
  const shown = all ? intel.items : intel.items.filter((i) => i.action !== 'skip:unchanged');
  const rows = shown.map((i) =>
    kind === 'run'
      ? [i.outcome ?? '', i.action, String(i.creditsCharged ?? 0), `${i.source}/${i.path}`, detailOf(i)]
      : [i.action, String(i.credits), `${i.source}/${i.path}`, i.reason],
  );
  lines.push(...columns(rows, kind === 'run' ? ['left', 'left', 'right', 'left', 'left'] : ['left', 'right', 'left', 'left']));
  const unchanged = intel.items.length - shown.length;
  if (unchanged > 0) lines.push(`(${plural(unchanged, 'unchanged entry', 'unchanged entries')} not listed)`);
  if (intel.items.length === 0) lines.push('no entries');
  const t = intel.totals;
  const credits =
    kind === 'plan'
      ? `${plural(t.creditsPlanned, 'credit')} planned`
      : `${plural(t.creditsSpent, 'credit')} spent (${formatCount(t.creditsPlanned)} planned)`;
  lines.push(
    `entries: ${formatCount(t.written)} ${kind === 'plan' ? 'to write' : 'written'}, ${formatCount(t.unchanged)} unchanged, ${formatCount(t.duplicate)} duplicate, ${formatCount(t.skipped)} skipped, ${formatCount(t.deferred)} deferred, ${formatCount(t.failed)} failed; ${credits}`,
  );
  return lines;
}

function detailOf(item: EntryItem): string {
  return item.error !== null && item.error !== undefined && item.outcome !== 'done' && item.action !== 'invalid'
    ? `${item.reason}: ${item.error}`
    : item.reason;
}
