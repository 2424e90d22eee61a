import type { SyncRun } from '../../sync/executor/index.js';
import { bucketOf } from '../../sync/planner/index.js';
import { listed } from '../../sync/report/format-plan.js';
import { displayPath, hasSeveralSources } from '../../sync/report/columns.js';
import type { EntryItem, RunItem } from '../../sync/types.js';
import type { CiCase, CiCredits, CiReport } from './model.js';

/**
 * A finished sync as a CI report: one case per file action, in the items' order, suite = the source.
 * Uploads, reprocesses and renames that went through pass; skipped and deferred files are skipped with
 * their reason; failed calls and files the service failed to process fail, and calls whose outcome is
 * not known are errors. Unchanged files are counted, not listed, unless `all` (then they pass), and
 * unsupported files past the text report's limit are counted by type, as in the text report. The
 * reindex, when one was wanted, is one more case (suite `reindex`).
 */
export function syncCiReport(run: SyncRun, o: { all: boolean; credits: CiCredits }): CiReport {
  const multi = hasSeveralSources(run.items, run.unlisted?.sources);
  const { shown, notes: foldNotes } = listed(run.items, { showUnchanged: o.all }, run.unlisted?.count);
  const cases: CiCase[] = shown.map((item) => itemCase(item, multi));
  const r = run.reindex;
  if (r.wanted) {
    const status =
      !r.allowed || r.outcome === 'not-run' ? 'skipped' : r.outcome === 'done' ? 'passed' : r.outcome === 'failed' ? 'failed' : 'error';
    const message =
      r.allowed && r.outcome !== 'not-run'
        ? `${r.outcome}${r.error === null ? '' : `: ${r.error}`}; ${r.creditsCharged} credits`
        : `not attempted: ${r.reason}`;
    cases.push({ suite: 'reindex', name: 'reindex', status, message });
  }
  const intel = run.intelligence;
  const notListed = foldNotes.map((n) => n.replace(/^\((.*)\)$/, '$1'));
  if (intel !== undefined) {
    const shownEntries = intel.items.filter((e) => o.all || e.action !== 'skip:unchanged');
    for (const e of shownEntries) cases.push(entryCase(e));
    const unchanged = intel.items.length - shownEntries.length;
    if (unchanged > 0) notListed.push(`${unchanged} unchanged ${unchanged === 1 ? 'entry' : 'entries'} not listed`);
  }
  const t = run.totals;
  const notes = [...run.notes];
  if (run.stop !== null) notes.push(`stopped spending: ${run.stop.message}`);
  return {
    title: 'kbsync sync',
    counts: [
      { label: 'uploaded', value: t.uploaded },
      { label: 'unchanged', value: t.unchanged },
      { label: 'renamed', value: t.renamed },
      { label: 'skipped', value: t.skipped },
      { label: 'deferred', value: t.deferred },
      { label: 'failed', value: t.failed },
      ...(intel === undefined ? [] : [{ label: 'entries written', value: intel.totals.written }]),
    ],
    credits: o.credits,
    notes,
    cases,
    // The text report's "(12 unchanged files not listed)", without its parentheses.
    notListed,
    startedAt: run.startedAt,
    durationMs: Math.max(0, Date.parse(run.finishedAt) - Date.parse(run.startedAt)),
  };
}

function itemCase(item: RunItem, multi: boolean): CiCase {
  const c = { suite: item.source, name: displayPath(item, multi) };
  const bucket = bucketOf(item);
  if (bucket === 'uploaded' || bucket === 'renamed' || bucket === 'unchanged') {
    const credits = item.creditsCharged > 0 ? `; ${item.creditsCharged} credits` : '';
    return { ...c, status: 'passed', message: `${item.action}: ${item.reason}${credits}` };
  }
  // The reason names the kind of skip ("ignored: matches .gitignore", "over the basic plan's limit...").
  if (bucket === 'skipped' || bucket === 'deferred') return { ...c, status: 'skipped', message: item.reason };
  const error = item.error !== null ? `: ${item.error}` : '';
  return { ...c, status: item.outcome === 'unknown' ? 'error' : 'failed', message: `${item.action}: ${item.reason}${error}` };
}

/** One intelligence entry as a case (suite: its source): written or unchanged passes, deferred is skipped, a bad record or a failed write fails. */
function entryCase(e: EntryItem): CiCase {
  const c = { suite: e.source, name: e.path };
  const charged = (e.creditsCharged ?? 0) > 0 ? `; ${e.creditsCharged} credits` : '';
  if (e.outcome === 'not-run' || e.action === 'defer:over-budget' || e.action === 'skip:unsupported') {
    return { ...c, status: 'skipped', message: e.reason };
  }
  if (e.action === 'invalid') return { ...c, status: 'failed', message: `invalid: ${e.reason}` };
  if (e.outcome === 'done' || e.outcome === undefined) return { ...c, status: 'passed', message: `${e.action}: ${e.reason}${charged}` };
  const error = e.error === null || e.error === undefined ? '' : `: ${e.error}`;
  return { ...c, status: e.outcome === 'unknown' ? 'error' : 'failed', message: `${e.action}: ${e.reason}${error}` };
}
