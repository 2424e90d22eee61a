import { costOf } from '../../shared/plans.js';
import { processingErrorClass } from '../../shared/processing-errors.js';
import type { TrackedIndex } from '../tracked/tracked-index.js';
import type { ObservedFile, PlanItem, TrackedFile } from '../types.js';
import type { Candidate, PlanContext } from './context.js';
import { remoteNameFor } from '../tracked/keys.js';
import { permanentFailureReason, REASON_CHANGING, remoteFailedReason, reprocessReason, unchangedReason } from './reasons.js';

/**
 * Classifies one observed file against its tracked row (`row` in `tracked`, -1 for none): a finished
 * item (unchanged, reprocess, remote-failed, defer:changing) or a candidate whose fate depends on the
 * rest of the plan. This is the hot path (every file, every pass): an unchanged file reads the
 * index's columns and allocates one small object, its item.
 */
export function classifyObserved(file: ObservedFile, row: number, tracked: TrackedIndex, ctx: PlanContext): PlanItem | Candidate {
  if (row >= 0) {
    const same = file.sha256 !== null ? file.sha256 === tracked.sha256At(row) : tracked.sameStat(row, file);
    if (same) {
      const remoteId = tracked.remoteIdAt(row);
      if (remoteId !== null && tracked.remoteStatusAt(row) !== 'failed') return unchangedItem(file, tracked, row, remoteId);
      const t = tracked.fileAt(row);
      if (remoteId !== null) return failedRemoteItem(file, t, remoteId, ctx);
      return {
        file,
        sha256: t.sha256,
        remoteName: remoteNameFor(file.source, file.path, ctx.multiSource),
        tracked: t,
        kind: 'not-in-dataset',
      };
    }
  }
  const t = row >= 0 ? tracked.fileAt(row) : undefined;
  if (file.sha256 === null) return changingItem(file, t, ctx);
  return {
    file,
    sha256: file.sha256,
    remoteName: remoteNameFor(file.source, file.path, ctx.multiSource),
    tracked: t,
    kind: t === undefined ? 'new' : 'changed',
  };
}

/** True when a value is a Candidate rather than a finished PlanItem. */
export function isCandidate(x: PlanItem | Candidate): x is Candidate {
  return 'kind' in x;
}

// One object literal per outcome, fields in one order: every unchanged item shares a hidden class,
// which keeps the reports' loops over 100k items monomorphic.
function unchangedItem(file: ObservedFile, tracked: TrackedIndex, row: number, remoteId: string): PlanItem {
  const remoteStatus = tracked.remoteStatusAt(row);
  return {
    source: file.source,
    path: file.path,
    action: 'skip:unchanged',
    reason: unchangedReason(remoteStatus),
    credits: 0,
    size: file.size,
    sha256: tracked.sha256At(row),
    remoteName: tracked.remoteNameAt(row),
    remoteId,
    wasTracked: true,
  };
}

/**
 * The `skip:unchanged` item of a tracked row whose file a delta plan counted but did not list
 * (planner/unlisted.ts): the file had the row's fingerprint, so it is the item unchangedItem makes.
 */
export function unchangedItemAt(tracked: TrackedIndex, row: number): PlanItem {
  const remoteStatus = tracked.remoteStatusAt(row);
  return {
    source: tracked.sourceAt(row),
    path: tracked.pathAt(row),
    action: 'skip:unchanged',
    reason: unchangedReason(remoteStatus),
    credits: 0,
    size: tracked.sizeAt(row),
    sha256: tracked.sha256At(row),
    remoteName: tracked.remoteNameAt(row),
    remoteId: tracked.remoteIdAt(row),
    wasTracked: true,
  };
}

/**
 * Same content, whose remote processing failed: reprocessed while attempts are left, unless the
 * service's error says the same bytes would fail again (an error without a known code may be transient).
 */
function failedRemoteItem(file: ObservedFile, t: TrackedFile, remoteId: string, ctx: PlanContext): PlanItem {
  const permanent = t.remoteError != null && processingErrorClass(t.remoteError) === 'permanent';
  if (!permanent && t.reprocessAttempts < ctx.maxReprocessAttempts) {
    const cost = costOf({ kind: 'reprocess' });
    const attempt = t.reprocessAttempts + 1;
    return {
      source: file.source,
      path: file.path,
      action: 'reprocess',
      reason: reprocessReason(t.remoteError, attempt, ctx.maxReprocessAttempts),
      credits: cost,
      size: file.size,
      sha256: t.sha256,
      remoteName: t.remoteName,
      remoteId,
      wasTracked: true,
      cost,
      reprocessAttempt: attempt,
    };
  }
  const reason = permanent
    ? permanentFailureReason(t.remoteError as string)
    : remoteFailedReason(t.remoteError, t.reprocessAttempts, ctx.maxReprocessAttempts);
  return {
    source: file.source,
    path: file.path,
    action: 'skip:remote-failed',
    reason,
    credits: 0,
    size: file.size,
    sha256: t.sha256,
    remoteName: t.remoteName,
    remoteId,
    wasTracked: true,
  };
}

function changingItem(file: ObservedFile, t: TrackedFile | undefined, ctx: PlanContext): PlanItem {
  return {
    source: file.source,
    path: file.path,
    action: 'defer:changing',
    reason: REASON_CHANGING,
    credits: 0,
    size: file.size,
    sha256: null,
    remoteName: t?.remoteName ?? remoteNameFor(file.source, file.path, ctx.multiSource),
    remoteId: t?.remoteId ?? null,
    wasTracked: t !== undefined,
  };
}
