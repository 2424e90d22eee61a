import type { Database } from 'better-sqlite3';
import type { HeldCopy, RemoteStatus } from '../types.js';
import { blobToSha, decodeRemoteName, encodeRemoteName, shaToBlob } from './codec.js';
import type { SourceIds } from './source-ids.js';
import type { TrackedFileInput } from './tracked-files.js';

type Row = { remote_id: string; sha256: Buffer; source: string; path: string; remote_name: string | null; status: RemoteStatus | null };

/**
 * The `remote_copies` table (migration v9): copies the dataset holds that no tracked row points at. Its
 * rows are written by triggers on `files`; here they are read, and their statuses kept current from the
 * listings and polls that update the tracked rows' (a copy left while queued may fail later).
 */
export function createHeldCopies(db: Database, sources: SourceIds) {
  const all = db.prepare<[], Row>(
    `SELECT c.remote_id, c.sha256, s.name AS source, c.path, c.remote_name, c.status
       FROM remote_copies c JOIN sources s ON s.id = c.source_id ORDER BY c.remote_id`,
  );
  const ids = db.prepare<[], string>('SELECT remote_id FROM remote_copies').pluck();
  const setStatus = db.prepare<[RemoteStatus, string]>('UPDATE remote_copies SET status = ? WHERE remote_id = ?');
  // A copy some row tracks (a path kept by the rebuild) is not held: a scan of files, once per older upload.
  const add = db.prepare<[string, Buffer, number, string, string | null, RemoteStatus | null, string]>(
    `INSERT INTO remote_copies (remote_id, sha256, source_id, path, remote_name, status)
       SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM files WHERE remote_id = ?)
       ON CONFLICT (remote_id) DO NOTHING`,
  );
  return {
    /** Every held copy no tracked file points at, by remote id. */
    heldCopies(): HeldCopy[] {
      return all.all().map((r) => ({
        remoteId: r.remote_id,
        sha256: blobToSha(r.sha256),
        remoteName: decodeRemoteName(r.source, r.path, r.remote_name),
        status: r.status,
      }));
    },
    /** Records copies a listing showed that no row tracks (a rebuilt state's older uploads of a name), inside the caller's transaction. */
    addHeld(copies: readonly TrackedFileInput[]): void {
      for (const c of copies) {
        if (c.remoteId === null) continue;
        const name = encodeRemoteName(c.source, c.path, c.remoteName);
        add.run(c.remoteId, shaToBlob(c.sha256), sources.idOf(c.source), c.path, name, c.remoteStatus, c.remoteId);
      }
    },
    /** Takes the statuses of held copies from `statuses` (by remote id); the table is small, the map may be a whole listing. */
    setHeldStatuses(statuses: ReadonlyMap<string, RemoteStatus>): void {
      for (const id of ids.all()) {
        const status = statuses.get(id);
        if (status !== undefined) setStatus.run(status, id);
      }
    },
  };
}

export type HeldCopies = ReturnType<typeof createHeldCopies>;
