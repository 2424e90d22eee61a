import type { PlanItem, TrackedFile } from '../types.js';
import { deletedReason } from './reasons.js';

/**
 * The plan item of a tracked path that is gone with no rename target: reported, free, remote copy
 * stays. `deletedBefore` when its row already says so, for the same reason (an earlier run recorded it).
 */
export function deletedItem(t: TrackedFile, sourceStillSynced: boolean): PlanItem {
  const reason = deletedReason(t, sourceStillSynced);
  return {
    source: t.source,
    path: t.path,
    action: 'deleted',
    reason,
    credits: 0,
    size: t.size,
    sha256: t.sha256,
    remoteName: t.remoteName,
    remoteId: t.remoteId,
    wasTracked: true,
    ...(t.lastAction === 'deleted' && t.lastReason === reason ? { deletedBefore: true } : {}),
  };
}
