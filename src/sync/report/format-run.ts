import { plural } from '../planner/format.js';
import type { RunItem, RunResult } from '../types.js';
import { columnChunks, displayPath, hasSeveralSources } from './columns.js';
import { listed, totalsLine, type FormatOptions } from './format-plan.js';
import { entryLines } from './format-entries.js';

/** A finished run for people: one aligned line per item (outcome, action, credits charged, path, reason or error), then totals. */
export function formatRun(run: RunResult, opts: FormatOptions = {}): string {
  return [...formatRunChunks(run, opts)].join('').slice(0, -1);
}

/** formatRun's text with a final newline, in chunks to write one after the other (see formatPlanChunks). */
export function* formatRunChunks(run: RunResult, opts: FormatOptions = {}): Generator<string> {
  const multi = hasSeveralSources(run.items);
  const { shown, notes } = listed(run.items, opts);
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

function detailOf(item: RunItem): string {
  return item.error !== null && item.outcome !== 'done' ? `${item.reason}: ${item.error}` : item.reason;
}

function reindexRunLine(r: RunResult['reindex']): string {
  if (!(r.wanted && r.allowed)) return `reindex: not attempted: ${r.reason}`;
  if (r.outcome === 'done') return `reindex: done, ${plural(r.creditsCharged, 'credit')}`;
  return `reindex: ${r.outcome}${r.error ? `: ${r.error}` : ''}`;
}
