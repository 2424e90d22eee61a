import type { PlanItem, TrackedFile } from '../types.js';
import { deletedReason } from './reasons.js';

/** The plan item of a tracked path that is gone with no rename target: reported, free, remote copy stays. */
export function deletedItem(t: TrackedFile, sourceStillSynced: boolean): PlanItem {
  return {
    source: t.source,
    path: t.path,
    action: 'deleted',
    reason: deletedReason(t, sourceStillSynced),
    credits: 0,
    size: t.size,
    sha256: t.sha256,
    remoteName: t.remoteName,
    remoteId: t.remoteId,
    wasTracked: true,
  };
}
