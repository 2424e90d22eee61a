import type { Database } from 'better-sqlite3';
import type { HeldCopy, RemoteStatus } from '../types.js';
import { blobToSha, decodeRemoteName } from './codec.js';

type Row = { remote_id: string; sha256: Buffer; source: string; path: string; remote_name: string | null; status: RemoteStatus | null };

/**
 * The `remote_copies` table (migration v9): copies the dataset holds that no tracked row points at. Its
 * rows are written by triggers on `files`; here they are read, and their statuses kept current from the
 * listings and polls that update the tracked rows' (a copy left while queued may fail later).
 */
export function createHeldCopies(db: Database) {
  const all = db.prepare<[], Row>(
    `SELECT c.remote_id, c.sha256, s.name AS source, c.path, c.remote_name, c.status
       FROM remote_copies c JOIN sources s ON s.id = c.source_id ORDER BY c.remote_id`,
  );
  const ids = db.prepare<[], string>('SELECT remote_id FROM remote_copies').pluck();
  const setStatus = db.prepare<[RemoteStatus, string]>('UPDATE remote_copies SET status = ? WHERE remote_id = ?');
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
    /** Takes the statuses of held copies from `statuses` (by remote id); the table is small, the map may be a whole listing. */
    setHeldStatuses(statuses: ReadonlyMap<string, RemoteStatus>): void {
      for (const id of ids.all()) {
        const status = statuses.get(id);
        if (status !== undefined) setStatus.run(status, id);
      }
    },
  };
}
