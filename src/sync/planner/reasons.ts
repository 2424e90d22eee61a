import type { Plan } from '../../shared/plans.js';
import type { BudgetPeriod, RemoteStatus, SkipReason, TrackedFile } from '../types.js';
import { formatBytesPair, formatCount, plural, shortSha } from './format.js';

/** Every human reason the planner writes, in one place so wording stays consistent. */

/** The config key that caps each budget period. */
export const BUDGET_SETTING: Record<BudgetPeriod, string> = {
  run: 'maxCreditsPerRun',
  day: 'maxCreditsPerDay',
  month: 'maxCreditsPerMonth',
};

const NEXT_PERIOD: Record<BudgetPeriod, string> = {
  run: 'the next run',
  day: 'the next UTC day',
  month: 'the next UTC month',
};

/**
 * One copy of each distinct reason text: a large plan repeats a few texts (every deferred upload of
 * a run says the same) that were built by concatenation, and each built copy is a rope of many parts.
 * Looking a text up flattens it; the kept copy is returned, so the many equal texts share one string.
 */
export function sharedText(text: string): string {
  const kept = sharedTexts.get(text);
  if (kept !== undefined) return kept;
  if (sharedTexts.size < SHARED_TEXTS_MAX) sharedTexts.set(text, text);
  return text;
}

/** Enough for the distinct texts of any budget admission; a plan of unique texts keeps no more than this. */
const SHARED_TEXTS_MAX = 4096;
const sharedTexts = new Map<string, string>();

export const REASON_NEW = 'new file';
export const REASON_UNCHANGED = 'unchanged since last sync';
export const REASON_CHANGING = 'changed while it was being read; hashed again on the next pass';
export const REASON_CHANGED_SINCE_HASHED = 'changed after it was hashed, before its upload; not sent, hashed again on the next pass';
export const REASON_DELETED = 'removed locally; the remote copy remains (the API has no delete)';

/** A tracked file whose content is the same, but whose remote processing is not finished or not known. */
export function unchangedReason(status: RemoteStatus | null): string {
  return status === null || status === 'processed' ? REASON_UNCHANGED : `${REASON_UNCHANGED} (remote status: ${status})`;
}

/** A tracked file whose content moved on. */
export function changedReason(before: string, after: string, staleRemoteId: string | null): string {
  const base = `content changed since last sync (sha256 ${shortSha(before)} -> ${shortSha(after)})`;
  return staleRemoteId === null
    ? base
    : `${base}; the previous remote copy (id ${staleRemoteId}) stays, stale (the API has no delete or replace)`;
}

/** A tracked file that never reached the dataset (skipped or deferred before). */
export function notInDatasetReason(lastAction: string | null): string {
  return lastAction === null ? 'not in the dataset yet' : `not in the dataset yet (last decision: ${lastAction})`;
}

export function adoptedReason(remoteId: string): string {
  return `already in the dataset under this name (remote id ${remoteId}); recorded without upload`;
}

export function renameReason(from: string, remoteName: string): string {
  return `moved from ${from} (same content): no upload; the remote copy keeps the name ${remoteName}`;
}

/** A held copy no tracked path pointed at (the path's content before an edit, an older commit's file). */
export function reuseReason(remoteId: string, remoteName: string, staleRemoteId: string | null): string {
  const base = `the dataset holds this content (file ${remoteId}, uploaded as ${remoteName}): no upload`;
  return staleRemoteId === null ? base : `${base}; the copy it replaces (id ${staleRemoteId}) stays, stale`;
}

/** A 0-byte file; a tracked one keeps its earlier copy. */
export function emptyReason(tracked: TrackedFile | undefined): string {
  const base = 'empty file (0 bytes): nothing to upload';
  return tracked?.remoteId ? `${base}; the copy of its earlier content (id ${tracked.remoteId}) remains in the dataset` : base;
}

export function duplicateReason(name: string, inThisRun: boolean): string {
  return inThisRun ? `same content as ${name}, uploaded in this run` : `same content as ${name} already in the dataset`;
}

export function duplicateDeferredReason(name: string, primaryReason: string): string {
  return `same content as ${name}, whose upload waits: ${primaryReason}`;
}

/** Over the effective size limit; says which limit bound. */
export function tooLargeReason(size: number, limit: number, plan: Plan, fromSetting: boolean): string {
  const [file, max] = formatBytesPair(size, limit);
  return fromSetting ? `over limits.maxFileBytes (${max}; file is ${file})` : `over the ${plan} plan's ${max} limit (file is ${file})`;
}

export function reprocessReason(error: string | null | undefined, attempt: number, max: number): string {
  return `remote processing failed: ${error ?? 'no reason given'}; reprocess ${attempt} of ${max}`;
}

/** A failure whose code says a reprocess cannot help (docs/api.md): the service's reason and what to do. */
export function permanentFailureReason(error: string): string {
  return `remote processing failed: ${error}; not reprocessed: the service says the same file would fail again (fix the file: it is uploaded again when its content changes)`;
}

/** Content whose copy failed for good under another path (moved, renamed or copied): not bought again. */
export function failedBeforeReason(where: string, error: string): string {
  return `the same content failed before as ${where}: ${error}; not uploaded again: the service says the same file would fail again (fix the file: it is uploaded when its content changes)`;
}

export function remoteFailedReason(error: string | null | undefined, attempts: number, max: number): string {
  const why = max === 0 ? 'upload.maxReprocessAttempts is 0' : `already reprocessed ${attempts} of ${max} times`;
  return `remote processing failed: ${error ?? 'no reason given'}; not retried (${why})`;
}

/** The budget check that failed: "would exceed maxCreditsPerDay (1,990 + 6 > 2,000)". */
export function overBudgetReason(period: BudgetPeriod, committed: number, cost: number, cap: number, reserved: number): string {
  const incl = reserved > 0 ? `, including ${reserved} for the reindex` : '';
  return `would exceed ${BUDGET_SETTING[period]} (${formatCount(committed)} + ${formatCount(cost)} > ${formatCount(cap)}${incl})`;
}

/**
 * A paid item the budget stopped: the check, then what waits and until when. `overCap`: the item costs
 * more than the cap alone, so no next period sends it; only a higher cap does.
 */
export function deferredReason(
  budgetReason: string,
  period: BudgetPeriod,
  action: 'upload' | 'reprocess',
  was: string,
  overCap = false,
): string {
  const until = overCap ? `until ${BUDGET_SETTING[period]} is raised (it costs more than the cap alone)` : `for ${NEXT_PERIOD[period]}`;
  return `${budgetReason}; ${action} (${was}) waits ${until}`;
}

export function deletedReason(tracked: TrackedFile, sourceStillSynced: boolean): string {
  if (tracked.remoteId === null) return 'removed locally (it was never in the dataset)';
  if (!sourceStillSynced) return `source ${tracked.source} is no longer synced; the remote copy remains (the API has no delete)`;
  return REASON_DELETED;
}

/** A path a source left out; a tracked one keeps its earlier remote copy. */
export function skippedReason(reason: SkipReason, detail: string, tracked: TrackedFile | undefined): string {
  // Most skipped paths share a few details (".png files are not a supported type"): one text each.
  let texts = skipTexts.get(reason);
  if (texts === undefined) skipTexts.set(reason, (texts = new Map()));
  let base = texts.get(detail);
  if (base === undefined) {
    base = SKIP_TEXT[reason](detail.trim());
    if (texts.size < 1024) texts.set(detail, base);
  }
  return tracked?.remoteId ? `${base}; the copy from an earlier sync remains in the dataset` : base;
}

const skipTexts = new Map<SkipReason, Map<string, string>>();

const SKIP_TEXT: Record<SkipReason, (detail: string) => string> = {
  ignored: (d) => (d ? `ignored: ${d}` : 'ignored'),
  secret: (d) => (d ? `looks like a secret, never uploaded: ${d}` : 'looks like a secret, never uploaded'),
  unsupported: (d) => (d ? `unsupported file type: ${d}` : 'unsupported file type'),
  symlink: (d) => (d ? `symbolic link, not followed: ${d}` : 'symbolic link, not followed'),
  unreadable: (d) => (d ? `unreadable: ${d}` : 'unreadable'),
  'bad-name': (d) => d,
  encrypted: (d) => `not converted, encrypted: ${d}; nothing is spent until the file changes`,
  'no-text': (d) => `not converted, no text: ${d}; nothing is spent until the file changes`,
  'convert-failed': (d) => `not converted: ${d}; nothing is spent until the file changes`,
};

export function reindexReason(
  changed: number,
  min: number,
  plan: Plan,
  blockedBy: 'tier' | BudgetPeriod | null,
  budgetReason: string,
): string {
  const files = plural(changed, 'changed file');
  if (changed < min) return `${files}, fewer than reindex.minChangedFiles (${formatCount(min)})`;
  if (blockedBy === 'tier') return `${files}, but reindex is not available on the ${plan} plan (Advanced tier only)`;
  if (blockedBy !== null) return `${files}, but a reindex ${budgetReason}`;
  return `${files} (reindex.minChangedFiles is ${formatCount(min)})`;
}
