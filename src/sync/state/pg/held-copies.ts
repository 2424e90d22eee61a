import type { HeldCopy, RemoteStatus } from '../../types.js';
import { decodeRemoteName, encodeRemoteName, shaToBlob } from '../../tracked/codec.js';
import type { TrackedFileInput } from '../../tracked/fields.js';
import type { Db } from './db.js';
import type { PgSources } from './sources.js';

/** The `remote_copies` table on PostgreSQL (sqlite/held-copies.ts is the SQLite one); a trigger on `files` writes its rows. */
export function createPgHeldCopies(db: Db, sources: PgSources) {
  return {
    /** The held copies no tracked file points at: all of them, or those of these contents (the candidates of a plan). */
    async heldCopies(sha256s?: readonly string[]): Promise<HeldCopy[]> {
      if (sha256s !== undefined && sha256s.length === 0) return [];
      const rows = await db.q<{
        remote_id: string;
        sha256: string;
        source: string;
        path: string;
        remote_name: string | null;
        status: RemoteStatus | null;
      }>(
        `SELECT c.remote_id, encode(c.sha256, 'hex') AS sha256, s.name AS source, c.path, c.remote_name, c.status
           FROM remote_copies c JOIN sources s ON s.id = c.source_id
          WHERE $1::bytea[] IS NULL OR c.sha256 = ANY($1::bytea[]) ORDER BY c.remote_id COLLATE "C"`,
        [sha256s === undefined ? null : sha256s.map(shaToBlob)],
      );
      return rows.map((r) => ({
        remoteId: r.remote_id,
        sha256: r.sha256,
        remoteName: decodeRemoteName(r.source, r.path, r.remote_name),
        status: r.status,
      }));
    },
    /** Records copies a listing showed that no row tracks (a rebuilt state's older uploads of a name), unless a row tracks them. */
    async addHeld(copies: readonly TrackedFileInput[]): Promise<void> {
      const rows = copies.filter((c) => c.remoteId !== null);
      if (rows.length === 0) return;
      const ids = await Promise.all(rows.map((c) => sources.idOf(c.source)));
      await db.run(
        `INSERT INTO remote_copies (remote_id, sha256, source_id, path, remote_name, status)
           SELECT * FROM unnest($1::text[], $2::bytea[], $3::int[], $4::text[], $5::text[], $6::text[]) AS c (a, b, d, e, f, g)
            WHERE NOT EXISTS (SELECT 1 FROM files WHERE remote_id = c.a)
         ON CONFLICT (remote_id) DO NOTHING`,
        [
          rows.map((c) => c.remoteId),
          rows.map((c) => shaToBlob(c.sha256)),
          ids,
          rows.map((c) => c.path),
          rows.map((c) => encodeRemoteName(c.source, c.path, c.remoteName)),
          rows.map((c) => c.remoteStatus),
        ],
      );
    },
    /** Takes the statuses of held copies from `statuses` (by remote id), as the tracked rows take theirs. */
    async setHeldStatuses(statuses: ReadonlyMap<string, RemoteStatus>): Promise<void> {
      if (statuses.size === 0) return;
      await db.run(
        `UPDATE remote_copies c SET status = u.status FROM unnest($1::text[], $2::text[]) AS u (remote_id, status)
          WHERE c.remote_id = u.remote_id AND c.status IS DISTINCT FROM u.status`,
        [[...statuses.keys()], [...statuses.values()]],
      );
    },
  };
}
