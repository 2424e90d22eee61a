import type { Database } from 'better-sqlite3';
import type { HeldCopy, RemoteStatus } from '../../types.js';
import { blobToSha, decodeRemoteName, encodeRemoteName, shaToBlob } from '../../tracked/codec.js';
import type { SourceIds } from './sources.js';
import type { TrackedFileInput } from './tracked.js';

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
  const bySha = db.prepare<[Buffer], Row>(
    `SELECT c.remote_id, c.sha256, s.name AS source, c.path, c.remote_name, c.status
       FROM remote_copies c JOIN sources s ON s.id = c.source_id WHERE c.sha256 = ?`,
  );
  const count = db.prepare<[], number>('SELECT count(*) FROM remote_copies').pluck();
  const ids = db.prepare<[], string>('SELECT remote_id FROM remote_copies').pluck();
  const setStatus = db.prepare<[RemoteStatus, string]>('UPDATE remote_copies SET status = ? WHERE remote_id = ?');
  // A copy some row tracks (a path kept by the rebuild) is not held: a scan of files, once per older upload.
  const add = db.prepare<[string, Buffer, number, string, string | null, RemoteStatus | null, string]>(
    `INSERT INTO remote_copies (remote_id, sha256, source_id, path, remote_name, status)
       SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM files WHERE remote_id = ?)
       ON CONFLICT (remote_id) DO NOTHING`,
  );
  return {
    /** The held copies no tracked file points at: all of them, or those of these contents (the candidates of a plan). */
    heldCopies(sha256s?: readonly string[]): HeldCopy[] {
      if (sha256s === undefined) return all.all().map(heldOf);
      if (sha256s.length === 0) return [];
      const held = count.get() ?? 0;
      if (held === 0) return [];
      // As many hashes asked about as copies held (a first sync asks about every file): one read of the table.
      if (held <= sha256s.length) {
        const wanted = new Set(sha256s);
        return all
          .all()
          .map(heldOf)
          .filter((h) => wanted.has(h.sha256));
      }
      return sha256s.flatMap((sha) => bySha.all(shaToBlob(sha)).map(heldOf));
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

function heldOf(r: Row): HeldCopy {
  return {
    remoteId: r.remote_id,
    sha256: blobToSha(r.sha256),
    remoteName: decodeRemoteName(r.source, r.path, r.remote_name),
    status: r.status,
  };
}

export type HeldCopies = ReturnType<typeof createHeldCopies>;
