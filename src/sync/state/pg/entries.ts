import { shaToBlob } from '../../tracked/codec.js';
import { entryOfRow, toEntryStatus, type EntryColumns } from '../rows.js';
import type { EntryRecord, EntryStatus, TrackedEntry } from '../state-types.js';
import type { Db } from './db.js';
import type { PgSources } from './sources.js';

type Row = EntryColumns & { sha256: string; source_id: number | null };

/** The `intel_entries` table on PostgreSQL (sqlite/entries.ts is the SQLite one): the dataset's intelligence content, shared. */
export function createPgEntries(db: Db, sources: PgSources) {
  const setStatus = (status: string, error: string | null, at: number, remoteId: string): Promise<number> =>
    db.run('UPDATE intel_entries SET status = $1, error = $2, updated_at = $3 WHERE remote_id = $4', [status, error, at, remoteId]);
  return {
    async trackedEntries(): Promise<Map<string, TrackedEntry>> {
      const rows = await db.q<Row>(
        `SELECT encode(sha256, 'hex') AS sha256, agent_id, remote_id, status, error, source_id, path, title, updated_at
           FROM intel_entries ORDER BY source_id, path`,
      );
      const out = new Map<string, TrackedEntry>();
      for (const r of rows) out.set(r.sha256, entryOfRow(r, r.sha256, r.source_id === null ? null : await sources.nameOf(r.source_id)));
      return out;
    },
    async recordEntries(entries: readonly EntryRecord[]): Promise<void> {
      const at = db.nowMs();
      for (const e of entries) {
        await db.run(
          `INSERT INTO intel_entries (sha256, agent_id, remote_id, status, source_id, path, title, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)
           ON CONFLICT (sha256) DO UPDATE SET remote_id = excluded.remote_id, status = excluded.status, error = NULL, updated_at = excluded.updated_at`,
          [
            shaToBlob(e.sha256),
            e.agentId,
            e.remoteId,
            toEntryStatus(e.status),
            e.source === null ? null : await sources.idOf(e.source),
            e.path,
            e.title,
            at,
          ],
        );
        if (e.remoteId === '') continue;
        // An event received before this write was recorded: the newest wins (as sqlite/entries.ts).
        const seen = await db.q<{ type: string; error: string | null }>(
          `SELECT type, (data_json::json ->> 'error') AS error FROM webhook_events
            WHERE type IN ('intelligence.processed', 'intelligence.failed') AND (data_json::json ->> 'entry_id') = $1
            ORDER BY sent_at DESC, received_at DESC LIMIT 1`,
          [e.remoteId],
        );
        const event = seen[0];
        if (event !== undefined) {
          const failed = event.type === 'intelligence.failed';
          await setStatus(failed ? 'failed' : 'processed', failed ? event.error : null, at, e.remoteId);
        }
      }
    },
    setEntryStatus: (remoteId: string, status: EntryStatus, error: string | null): Promise<number> =>
      setStatus(status, error, db.nowMs(), remoteId),
  };
}
