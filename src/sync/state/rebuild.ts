import { toRemoteStatus, UNKNOWN_INODE, UNKNOWN_MTIME_NS, UNKNOWN_SIZE } from '../tracked/codec.js';
import type { TrackedFileInput } from '../tracked/fields.js';
import type { RebuildReport, RemoteListingEntry } from './state-types.js';

/** Maps a remote file name back to the source path it was uploaded from, or null when it is not ours. */
export type NameMapper = (name: string) => { source: string; path: string } | null;

/**
 * The rows a rebuild writes (the newest listing entry of each mapped name, with unknown mtime/inode), the
 * older uploads of those names (held copies: a path whose content goes back to one reuses it), and its
 * report so far: names not ours, entries without a hash and older uploads of a name counted; the same for both stores.
 */
export function rebuildPlan(
  remoteFiles: readonly RemoteListingEntry[],
  mapName: NameMapper,
): { report: RebuildReport; files: TrackedFileInput[]; older: TrackedFileInput[] } {
  const report: RebuildReport = { inserted: 0, unmapped: 0, withoutHash: 0, superseded: 0, kept: 0 };
  const latest = new Map<string, TrackedFileInput>();
  const older: TrackedFileInput[] = [];
  for (const entry of remoteFiles) {
    const target = mapName(entry.name);
    if (target === null) {
      report.unmapped++;
      continue;
    }
    if (entry.sha256 === null) {
      report.withoutHash++;
      continue;
    }
    const key = `${target.source}\0${target.path}`;
    const before = latest.get(key);
    if (before !== undefined) {
      report.superseded++;
      older.push(before);
    }
    latest.set(key, {
      source: target.source,
      path: target.path,
      size: entry.size ?? UNKNOWN_SIZE,
      mtimeNs: UNKNOWN_MTIME_NS,
      inode: UNKNOWN_INODE,
      sha256: entry.sha256,
      remoteName: entry.name,
      remoteId: entry.id,
      remoteStatus: toRemoteStatus(entry.status),
      reprocessAttempts: 0,
      lastAction: 'rebuilt',
      lastReason: 'rebuilt from the remote listing',
    });
  }
  return { report, files: [...latest.values()], older };
}
