import type { HeldCopy, RemoteStatus } from '../../types.js';
import { decodeRemoteName } from '../codec.js';
import type { Db } from './pg-db.js';

/** The `remote_copies` table on PostgreSQL (held-copies.ts is the SQLite one); a trigger on `files` writes its rows. */
export function createPgHeldCopies(db: Db) {
  return {
    async heldCopies(): Promise<HeldCopy[]> {
      const rows = await db.q<{
        remote_id: string;
        sha256: string;
        source: string;
        path: string;
        remote_name: string | null;
        status: RemoteStatus | null;
      }>(
        `SELECT c.remote_id, encode(c.sha256, 'hex') AS sha256, s.name AS source, c.path, c.remote_name, c.status
           FROM remote_copies c JOIN sources s ON s.id = c.source_id ORDER BY c.remote_id COLLATE "C"`,
      );
      return rows.map((r) => ({
        remoteId: r.remote_id,
        sha256: r.sha256,
        remoteName: decodeRemoteName(r.source, r.path, r.remote_name),
        status: r.status,
      }));
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
