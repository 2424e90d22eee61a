import { costOf } from '../../shared/plans.js';
import type { ObservedFile, PlanItem, TrackedFile } from '../types.js';
import type { Candidate, PlanContext } from './context.js';
import { remoteNameFor } from './keys.js';
import { REASON_CHANGING, remoteFailedReason, reprocessReason, unchangedReason } from './reasons.js';

/**
 * Classifies one observed file against its tracked row: a finished item (unchanged, reprocess,
 * remote-failed, defer:changing) or a candidate whose fate depends on the rest of the plan.
 * This is the hot path (every file, every pass): unchanged files allocate one small object.
 */
export function classifyObserved(file: ObservedFile, tracked: TrackedFile | undefined, ctx: PlanContext): PlanItem | Candidate {
  if (tracked !== undefined) {
    const same = file.sha256 !== null ? file.sha256 === tracked.sha256 : sameStat(file, tracked);
    if (same) {
      if (tracked.remoteId !== null) return sameContentItem(file, tracked, tracked.remoteId, ctx);
      return { file, sha256: tracked.sha256, remoteName: remoteNameFor(file.source, file.path, ctx.multiSource), tracked, kind: 'not-in-dataset' };
    }
  }
  if (file.sha256 === null) return changingItem(file, tracked, ctx);
  return {
    file,
    sha256: file.sha256,
    remoteName: remoteNameFor(file.source, file.path, ctx.multiSource),
    tracked,
    kind: tracked === undefined ? 'new' : 'changed',
  };
}

/** True when size, mtime and inode all match: the content is taken as unchanged without hashing. */
export function sameStat(file: ObservedFile, tracked: TrackedFile): boolean {
  return file.size === tracked.size && file.mtimeNs === tracked.mtimeNs && file.inode === tracked.inode;
}

/** True when a value is a Candidate rather than a finished PlanItem. */
export function isCandidate(x: PlanItem | Candidate): x is Candidate {
  return 'kind' in x;
}

function sameContentItem(file: ObservedFile, t: TrackedFile, remoteId: string, ctx: PlanContext): PlanItem {
  // One object literal per outcome, fields in one order: every unchanged item shares a hidden class,
  // which keeps the reports' loops over 100k items monomorphic.
  if (t.remoteStatus !== 'failed') {
    return {
      source: file.source, path: file.path, action: 'skip:unchanged', reason: unchangedReason(t.remoteStatus), credits: 0,
      size: file.size, sha256: t.sha256, remoteName: t.remoteName, remoteId, wasTracked: true,
    };
  }
  if (t.reprocessAttempts < ctx.maxReprocessAttempts) {
    const cost = costOf({ kind: 'reprocess' });
    const attempt = t.reprocessAttempts + 1;
    return {
      source: file.source, path: file.path, action: 'reprocess', reason: reprocessReason(t.remoteError, attempt, ctx.maxReprocessAttempts), credits: cost,
      size: file.size, sha256: t.sha256, remoteName: t.remoteName, remoteId, wasTracked: true, cost, reprocessAttempt: attempt,
    };
  }
  return {
    source: file.source, path: file.path, action: 'skip:remote-failed', reason: remoteFailedReason(t.remoteError, t.reprocessAttempts, ctx.maxReprocessAttempts), credits: 0,
    size: file.size, sha256: t.sha256, remoteName: t.remoteName, remoteId, wasTracked: true,
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
