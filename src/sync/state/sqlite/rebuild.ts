import type { Database } from 'better-sqlite3';
import type { Meta } from './meta.js';
import { REMOTE_CHECK_KEY } from './schema.js';
import type { RebuildReport, RemoteListingEntry } from '../state-types.js';
import type { TrackedFiles } from './tracked.js';
import type { HeldCopies } from './held-copies.js';
import { rebuildPlan, type NameMapper } from '../rebuild.js';

/**
 * Fills the tracked files from the remote listing (state new or lost), so that the next plan matches local
 * content by SHA-256 instead of buying every upload again. Rows get unknown mtime/inode (the next observe
 * re-hashes each file once); paths already tracked are kept. The listing is ordered by id (docs/api.md), so
 * when a name appears several times the last entry (the newest upload) wins. Records the rebuild in meta
 * and, in the same transaction, clears the state's "not yet checked against the dataset" mark.
 */
export function rebuildFromRemote(
  db: Database,
  deps: { tracked: TrackedFiles; held: HeldCopies; meta: Meta; nowMs: () => number },
  remoteFiles: readonly RemoteListingEntry[],
  mapName: NameMapper,
): RebuildReport {
  const { report, files, older } = rebuildPlan(remoteFiles, mapName);
  db.transaction(() => {
    const at = deps.nowMs();
    for (const f of files) {
      // One statement per entry: a row already there is kept as it is.
      const written = deps.tracked.writeTrackedIfNew(f, at);
      if (written) report.inserted++;
      else report.kept++;
    }
    deps.held.addHeld(older);
    deps.meta.setMeta('rebuilt_from_remote', JSON.stringify({ at: new Date(at).toISOString(), ...report }));
    deps.meta.setMeta(REMOTE_CHECK_KEY, null);
  }).immediate();
  return report;
}
