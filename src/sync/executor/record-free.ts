import { trackedKey } from '../planner/index.js';
import type { StateStore } from '../state/index.js';
import type { TrackedIndex } from '../tracked-index.js';
import type { ObservedFile, PlanItem, TrackedFile } from '../types.js';

/**
 * Records the decisions that cost nothing, in one transaction: renames move the tracked row (the remote
 * copy keeps its old name), duplicate content is tracked against the copy that holds it, deleted paths
 * are marked, and unchanged files whose stat moved get their new fingerprint (so they are not hashed again).
 */
export function recordFreeDecisions(
  state: StateStore,
  items: readonly PlanItem[],
  observed: ReadonlyMap<string, ObservedFile>,
  tracked: TrackedIndex,
): void {
  state.transaction(() => {
    for (const item of items) {
      const key = trackedKey(item.source, item.path);
      const file = observed.get(key);
      if (item.action === 'rename' && item.renamedFrom !== undefined && file !== undefined && file.sha256 !== null) {
        const before = tracked.find(item.renamedFrom.source, item.renamedFrom.path);
        if (before === undefined) continue;
        state.upsertTracked({ ...fingerprintOf(before, file), lastAction: 'rename', lastReason: item.reason });
        state.removeTracked(item.renamedFrom.source, item.renamedFrom.path);
      } else if (item.action === 'skip:duplicate-content' && file !== undefined && file.sha256 !== null) {
        const before = tracked.find(item.source, item.path);
        state.upsertTracked({
          source: item.source, path: item.path, size: file.size, mtimeNs: file.mtimeNs, inode: file.inode, sha256: file.sha256,
          remoteName: item.duplicateOf?.name ?? item.remoteName, remoteId: item.duplicateOf?.remoteId ?? null,
          remoteStatus: before?.remoteStatus ?? null, reprocessAttempts: 0, lastAction: item.action, lastReason: item.reason,
        });
      } else if (item.action === 'deleted') {
        state.markDeleted(item.source, item.path, item.reason);
      } else if (item.action === 'skip:unchanged' && file !== undefined && file.sha256 !== null) {
        // Read from the index's columns: most unchanged files kept their stat, and need no TrackedFile.
        const row = tracked.rowOf(item.source, item.path);
        if (row >= 0 && !tracked.sameStat(row, file)) {
          const before = tracked.fileAt(row);
          state.upsertTracked({ ...fingerprintOf(before, file), lastAction: before.lastAction, lastReason: before.lastReason });
        }
      }
    }
  });
}

function fingerprintOf(before: TrackedFile, file: ObservedFile) {
  return {
    source: file.source, path: file.path, size: file.size, mtimeNs: file.mtimeNs, inode: file.inode, sha256: file.sha256 as string,
    remoteName: before.remoteName, remoteId: before.remoteId, remoteStatus: before.remoteStatus, reprocessAttempts: before.reprocessAttempts,
  };
}
