import { uploadCost } from '../../shared/plans.js';
import type { ConvertType } from '../../shared/file-types.js';
import type { ConvertedFile, PlanItem, TrackedFile } from '../types.js';
import { formatBytes, plural } from './format.js';
import type { ContentIndex } from './content-index.js';
import { failedCopyFor, sameNameCopy } from './content-index.js';
import type { Candidate, PlanContext } from './context.js';
import { compareByPath } from '../tracked/keys.js';
import {
  REASON_NEW,
  adoptedReason,
  changedReason,
  duplicateReason,
  emptyReason,
  failedBeforeReason,
  notInDatasetReason,
  renameReason,
  reuseReason,
  tooLargeReason,
} from './reasons.js';

/** Decided candidates, plus which vanished rows were consumed by renames. */
export type ResolvedCandidates = { items: PlanItem[]; consumed: Set<TrackedFile> };

/**
 * Decides each candidate, cheapest outcome first: already stored under its own name (adopt), empty,
 * a vanished path's content (rename), content a tracked path's copy holds (duplicate), a held copy no
 * path points at (reuse), content the listing shows (duplicate), over the size limit, the same content
 * as an earlier upload of this plan (duplicate), else upload.
 * Candidates are taken in source/path order so pairings never depend on input order.
 */
export function resolveCandidates(
  candidates: Candidate[],
  renameFrom: Map<string, TrackedFile[]>,
  index: ContentIndex,
  ctx: PlanContext,
): ResolvedCandidates {
  const items: PlanItem[] = [];
  const consumed = new Set<TrackedFile>();
  const uploadsBySha = new Map<string, PlanItem>();
  // Usually already in order (the planner meets files in path order): checked in one pass, not sorted.
  if (!inPathOrder(candidates)) candidates.sort((a, b) => compareByPath(a.file, b.file));
  for (const c of candidates) {
    const item = resolveOne(c, renameFrom, index, uploadsBySha, consumed, ctx);
    if (item.action === 'upload') uploadsBySha.set(c.sha256, item);
    items.push(item);
  }
  return { items, consumed };
}

function resolveOne(
  c: Candidate,
  renameFrom: Map<string, TrackedFile[]>,
  index: ContentIndex,
  uploadsBySha: Map<string, PlanItem>,
  renamed: Set<TrackedFile>,
  ctx: PlanContext,
): PlanItem {
  const { file, sha256 } = c;
  // A converted document is priced, limited and listed by its Markdown, which is what goes up.
  const size = file.converted?.markdownBytes ?? file.size;
  const base = {
    source: file.source,
    path: file.path,
    credits: 0,
    size,
    sha256,
    remoteName: c.remoteName,
    remoteId: null,
    wasTracked: c.tracked !== undefined,
  };

  // A held copy under this very name (the listing shows the path's earlier content) is a reuse, said as such.
  const own = sameNameCopy(index, c.remoteName, sha256);
  if (own !== undefined && !index.heldIds.has(own.id))
    return { ...base, action: 'skip:unchanged', reason: adoptedReason(own.id), remoteId: own.id, adoptedStatus: own.status };

  // Nothing to learn from, and an upload costs the same as any small file's. A tracked path keeps its
  // row: its earlier copy stays in the dataset, and the path is unchanged again if that content comes back.
  if (size === 0)
    return {
      ...base,
      action: 'skip:empty',
      reason: emptyReason(c.tracked),
      remoteName: c.tracked?.remoteName ?? c.remoteName,
      remoteId: c.tracked?.remoteId ?? null,
    };

  if (c.kind === 'new') {
    const from = renameFrom.get(sha256)?.shift();
    if (from !== undefined) {
      renamed.add(from);
      const fromPath = ctx.multiSource || from.source !== file.source ? `${from.source}/${from.path}` : from.path;
      return {
        ...base,
        action: 'rename',
        reason: renameReason(fromPath, from.remoteName),
        remoteName: from.remoteName,
        remoteId: from.remoteId,
        renamedFrom: { source: from.source, path: from.path },
      };
    }
  }

  const stale = c.kind === 'changed' && c.tracked !== undefined ? staleOf(c.tracked) : {};
  const copy = index.bySha.get(sha256);
  const held = copy?.tracked === true ? undefined : index.held.get(sha256);
  if (held !== undefined) {
    return {
      ...base,
      ...stale,
      action: 'reuse',
      reason: reuseReason(held.remoteId, held.remoteName, stale.staleRemoteId ?? null),
      remoteName: held.remoteName,
      remoteId: held.remoteId,
      reuses: { remoteId: held.remoteId, name: held.remoteName, status: held.status },
    };
  }
  if (copy !== undefined) {
    return {
      ...base,
      ...stale,
      action: 'skip:duplicate-content',
      reason: duplicateReason(copy.name, false),
      remoteId: copy.remoteId,
      duplicateOf: { name: copy.name, remoteId: copy.remoteId, inThisRun: false },
    };
  }

  // The same bytes of the same type failed for good elsewhere (the file moved, or was copied): never bought again.
  const failed = failedCopyFor(index, sha256, file.path);
  if (failed !== undefined) {
    const where = ctx.multiSource || failed.from.source !== file.source ? `${failed.from.source}/${failed.from.path}` : failed.from.path;
    return {
      ...base,
      ...stale,
      action: 'skip:remote-failed',
      reason: failedBeforeReason(where, failed.error),
      remoteName: failed.name,
      remoteId: failed.remoteId,
      failedCopy: { name: failed.name, remoteId: failed.remoteId, error: failed.error },
    };
  }

  if (size > ctx.maxFileBytes) {
    return {
      ...base,
      action: 'skip:too-large',
      reason: tooLargeReason(size, ctx.maxFileBytes, ctx.plan, ctx.limitFromSetting),
      limitBytes: ctx.maxFileBytes,
    };
  }

  const primary = uploadsBySha.get(sha256);
  if (primary !== undefined) {
    return {
      ...base,
      ...stale,
      action: 'skip:duplicate-content',
      reason: duplicateReason(primary.remoteName, true),
      duplicateOf: { name: primary.remoteName, remoteId: null, inThisRun: true },
    };
  }

  // The common outcome (every file of a first sync): one literal, no spreads, one shape for all.
  const cost = uploadCost(size, ctx.uploadCost);
  const upload: PlanItem = {
    source: file.source,
    path: file.path,
    action: 'upload',
    reason: file.converted === undefined ? uploadReason(c) : `${uploadReason(c)}; ${convertedNote(file.converted)}`,
    credits: cost,
    size,
    sha256,
    remoteName: c.remoteName,
    remoteId: null,
    wasTracked: base.wasTracked,
    cost,
  };
  return c.kind === 'changed' && c.tracked !== undefined ? Object.assign(upload, staleOf(c.tracked)) : upload;
}

function inPathOrder(candidates: readonly Candidate[]): boolean {
  for (let i = 1; i < candidates.length; i++) {
    if (compareByPath((candidates[i - 1] as Candidate).file, (candidates[i] as Candidate).file) > 0) return false;
  }
  return true;
}

function staleOf(t: TrackedFile): Pick<PlanItem, 'previousSha256' | 'previousRemoteName' | 'staleRemoteId'> {
  return t.remoteId === null
    ? { previousSha256: t.sha256 }
    : { previousSha256: t.sha256, previousRemoteName: t.remoteName, staleRemoteId: t.remoteId };
}

function uploadReason(c: Candidate): string {
  switch (c.kind) {
    case 'new':
      return REASON_NEW;
    case 'changed':
      return changedReason(c.tracked?.sha256 ?? '', c.sha256, c.tracked?.remoteId ?? null);
    case 'not-in-dataset':
      return notInDatasetReason(c.tracked?.lastAction ?? null);
  }
}

const TYPE_NAMES: Record<ConvertType, [string, string]> = {
  pdf: ['PDF', 'page'],
  pptx: ['PowerPoint', 'slide'],
  doc: ['Word 97-2003', 'part'],
  odt: ['OpenDocument text', 'part'],
  ods: ['OpenDocument spreadsheet', 'sheet'],
  odp: ['OpenDocument presentation', 'slide'],
  rtf: ['RTF', 'part'],
  epub: ['EPUB', 'chapter'],
};

/** "converted from PDF (3 pages, 12.1 KB of Markdown)". */
export function convertedNote(c: ConvertedFile): string {
  const [name, unit] = TYPE_NAMES[c.type];
  const units = unit === 'part' ? '' : `${plural(c.units, unit)}, `;
  const again =
    c.newConverter === true ? `; converted again: this kbsync's ${name} converter is newer than the one that made the synced Markdown` : '';
  return `converted from ${name} (${units}${formatBytes(c.markdownBytes)} of Markdown)${again}`;
}
