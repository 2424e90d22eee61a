import { plural } from '../planner/format.js';
import type { RunItem, RunResult } from '../types.js';
import { columnChunks, displayPath, hasSeveralSources } from './columns.js';
import { listed, totalsLine, type FormatOptions } from './format-plan.js';
import { entryLines } from './format-entries.js';

/**
 * A finished run for people: one aligned line per item (outcome, action, credits charged, path, reason or error), then totals.
 * Files uploaded past MAX_UPLOADED_LISTED are counted, not listed (failures and the rest always are).
 */
export function formatRun(run: RunResult, opts: FormatOptions = {}): string {
  return [...formatRunChunks(run, opts)].join('').slice(0, -1);
}

/** formatRun's text with a final newline, in chunks to write one after the other (see formatPlanChunks). */
export function* formatRunChunks(run: RunResult, opts: FormatOptions = {}): Generator<string> {
  const multi = hasSeveralSources(run.items, opts.unlisted?.sources);
  const { shown: kept, notes } = listed(run.items, opts, opts.unlisted?.count);
  const shown = foldUploaded(kept, opts, notes);
  yield* columnChunks(shown, (i) => [i.outcome, i.action, String(i.creditsCharged), displayPath(i, multi), detailOf(i)], [
    'left',
    'left',
    'right',
    'left',
    'left',
  ]);
  const lines = notes;
  if (run.intelligence !== undefined) lines.push(...entryLines(run.intelligence, 'run', opts.showUnchanged === true));
  lines.push('', totalsLine(run.totals, 'run'), reindexRunLine(run.reindex));
  yield `${lines.join('\n')}\n`;
}

/** Up to this many files uploaded are listed one per line; more are counted (a first sync of a large tree would print a line per file). */
export const MAX_UPLOADED_LISTED = 50;

/** The items without the files uploaded, when more than MAX_UPLOADED_LISTED were and `--all` is not given; a note counts them. */
function foldUploaded(items: readonly RunItem[], opts: FormatOptions, notes: string[]): readonly RunItem[] {
  if (opts.showUnchanged === true) return items;
  const isUploaded = (i: RunItem): boolean => i.outcome === 'done' && i.action === 'upload';
  let uploaded = 0;
  for (let k = 0; k < items.length; k++) if (isUploaded(items[k] as RunItem)) uploaded += 1;
  if (uploaded <= MAX_UPLOADED_LISTED) return items;
  notes.push(`(${plural(uploaded, 'file')} uploaded not listed; --all or --json lists them)`);
  return items.filter((i) => !isUploaded(i));
}

function detailOf(item: RunItem): string {
  return item.error !== null && item.outcome !== 'done' ? `${item.reason}: ${item.error}` : item.reason;
}

function reindexRunLine(r: RunResult['reindex']): string {
  if (!(r.wanted && r.allowed)) return `reindex: not attempted: ${r.reason}`;
  if (r.outcome === 'done') return `reindex: done, ${plural(r.creditsCharged, 'credit')}`;
  return `reindex: ${r.outcome}${r.error ? `: ${r.error}` : ''}`;
}
