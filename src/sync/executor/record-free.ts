import { toRemoteStatus, type StateStore } from '../state/index.js';
import type { ListedCopy } from '../tracked/fields.js';
import type { TrackedIndex } from '../tracked/tracked-index.js';
import type { ObservedFile, PlanItem, RemoteStatus, TrackedFile } from '../types.js';
import type { ObservedLookup } from './observed-lookup.js';

/**
 * Records the decisions that cost nothing, in one transaction: renames move the tracked row (the remote
 * copy keeps its old name), duplicate content is tracked against the copy that holds it, a reused copy
 * becomes the path's (the copy the path left is then held, by the state's trigger), content whose copy
 * failed for good elsewhere is tracked against that copy with the service's reason, deleted paths
 * are marked, unchanged files whose stat moved get their new fingerprint (so they are not hashed again),
 * and a file back in place of a row marked deleted is recorded as tracked again.
 */
export function recordFreeDecisions(state: StateStore, items: readonly PlanItem[], observed: ObservedLookup, tracked: TrackedIndex): void {
  const copyStatus = statusesOfDuplicatedCopies(items, tracked);
  // The copies that failed for good which new paths now point at: their reason goes to those rows too.
  const failedCopies: ListedCopy[] = [];
  state.transaction(() => {
    for (const item of items) {
      const { action } = item;
      if (action === 'deleted') {
        state.markDeleted(item.source, item.path, item.reason);
        continue;
      }
      // Only these read the observed file: a skipped path has none to find.
      const failed = action === 'skip:remote-failed' ? item.failedCopy : undefined;
      if (
        action !== 'rename' &&
        action !== 'skip:duplicate-content' &&
        action !== 'skip:unchanged' &&
        action !== 'reuse' &&
        failed === undefined
      )
        continue;
      const file = observed(item.source, item.path);
      if (file === undefined || file.sha256 === null) continue;
      if (action === 'rename' && item.renamedFrom !== undefined) {
        const before = tracked.find(item.renamedFrom.source, item.renamedFrom.path);
        if (before === undefined) continue;
        state.upsertTracked(trackedAt(file, before, 'rename', item.reason));
        state.removeTracked(item.renamedFrom.source, item.renamedFrom.path);
      } else if (failed !== undefined) {
        // A row of its own against the failed copy: later plans see that content's failure at this path.
        const copy = { remoteName: failed.name, remoteId: failed.remoteId, remoteStatus: 'failed' as const, reprocessAttempts: 0 };
        state.upsertTracked(trackedAt(file, copy, action, item.reason));
        failedCopies.push({ id: failed.remoteId, status: 'failed', error: failed.error, chunkCount: null });
      } else if (action === 'reuse' && item.reuses !== undefined) {
        const copy = {
          remoteName: item.reuses.name,
          remoteId: item.reuses.remoteId,
          remoteStatus: item.reuses.status,
          reprocessAttempts: 0,
        };
        state.upsertTracked(trackedAt(file, copy, action, item.reason));
      } else if (action === 'skip:duplicate-content') {
        const before = tracked.find(item.source, item.path);
        const copy = {
          remoteName: item.duplicateOf?.name ?? item.remoteName,
          remoteId: item.duplicateOf?.remoteId ?? null,
          // The copy it points at is the one whose status counts (a new path has no row of its own yet).
          remoteStatus: copyStatus.get(item.duplicateOf?.remoteId ?? '') ?? before?.remoteStatus ?? null,
          reprocessAttempts: 0,
        };
        state.upsertTracked(trackedAt(file, copy, action, item.reason));
      } else if (action === 'skip:unchanged' && item.adoptedStatus !== undefined) {
        // A copy of this content under this name, found in the listing: tracked from now on, in place of
        // what the row held (another content's copy, after a force-push back), or of no row at all.
        const before = tracked.find(item.source, item.path);
        const copy = {
          remoteName: item.remoteName,
          remoteId: item.remoteId,
          remoteStatus: toRemoteStatus(item.adoptedStatus),
          reprocessAttempts: before?.remoteId === item.remoteId ? before.reprocessAttempts : 0,
        };
        state.upsertTracked(trackedAt(file, copy, action, item.reason));
      } else if (action === 'skip:unchanged') {
        // Read from the index's columns: most unchanged files kept their stat, and need no TrackedFile.
        // A row marked deleted whose file is back (same content, same stat or not) is recorded as in the source again.
        const row = tracked.rowOf(item.source, item.path);
        if (row >= 0 && tracked.deletedAt(row)) state.upsertTracked(trackedAt(file, tracked.fileAt(row), action, item.reason));
        else if (row >= 0 && !tracked.sameStat(row, file)) {
          const before = tracked.fileAt(row);
          state.upsertTracked(trackedAt(file, before, before.lastAction, before.lastReason));
        }
      }
    }
    // The service's reason is not a field an upsert writes; the listing's update writes it to every row holding the copy.
    if (failedCopies.length > 0) state.recordListing(failedCopies);
  });
}

/**
 * The status of each tracked copy a `skip:duplicate-content` item points at, by remote id: one pass over
 * the rows holding those contents (a copy found only in the remote listing has none here).
 */
function statusesOfDuplicatedCopies(items: readonly PlanItem[], tracked: TrackedIndex): Map<string, RemoteStatus> {
  const wanted = new Set<string>();
  const ids = new Set<string>();
  for (const item of items) {
    const id = item.duplicateOf?.remoteId;
    if (item.action !== 'skip:duplicate-content' || id == null || item.sha256 === null) continue;
    wanted.add(item.sha256);
    ids.add(id);
  }
  const statuses = new Map<string, RemoteStatus>();
  if (wanted.size === 0) return statuses;
  for (const row of tracked.rowsWithSha256(wanted)) {
    const id = tracked.remoteIdAt(row);
    const status = tracked.remoteStatusAt(row);
    if (id !== null && status !== null && ids.has(id) && !statuses.has(id)) statuses.set(id, status);
  }
  return statuses;
}

/** The row of an observed file that points at `copy` (the remote copy and its status), with the decision that put it there. */
function trackedAt(
  file: ObservedFile,
  copy: Pick<TrackedFile, 'remoteName' | 'remoteId' | 'remoteStatus' | 'reprocessAttempts'>,
  lastAction: TrackedFile['lastAction'],
  lastReason: TrackedFile['lastReason'],
) {
  return {
    source: file.source,
    path: file.path,
    size: file.size,
    mtimeNs: file.mtimeNs,
    inode: file.inode,
    sha256: file.sha256 as string,
    remoteName: copy.remoteName,
    remoteId: copy.remoteId,
    remoteStatus: copy.remoteStatus,
    reprocessAttempts: copy.reprocessAttempts,
    lastAction,
    lastReason,
  };
}
