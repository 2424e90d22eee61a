import type { Database } from 'better-sqlite3';
import { blobToSha, shaToBlob } from '../../tracked/codec.js';
import type { SourceIds } from './sources.js';
import { entryOfRow, toEntryStatus, type EntryColumns } from '../rows.js';
import type { EntryRecord, EntryStatus, TrackedEntry } from '../state-types.js';

type Row = EntryColumns & { sha256: Buffer; source_id: number | null };

/** The `intel_entries` table (schema v7): the intelligence content written to the dataset. */
export function createIntelEntries(db: Database, sources: SourceIds, nowMs: () => number) {
  const all = db.prepare<[], Row>('SELECT * FROM intel_entries ORDER BY source_id, path');
  // A row the service already knows keeps where it was first written from; its id and status follow the newest answer.
  const upsert = db.prepare<[Buffer, string, string, string, number | null, string | null, string | null, number]>(
    `INSERT INTO intel_entries (sha256, agent_id, remote_id, status, source_id, path, title, updated_at) VALUES (?,?,?,?,?,?,?,?)
     ON CONFLICT (sha256) DO UPDATE SET remote_id = excluded.remote_id, status = excluded.status, error = NULL, updated_at = excluded.updated_at`,
  );
  const setStatus = db.prepare<[string, string | null, number, string]>(
    'UPDATE intel_entries SET status = ?, error = ?, updated_at = ? WHERE remote_id = ?',
  );
  // An event the daemon received before the write that made the entry was recorded (the service may
  // process an entry and deliver its event while kbsync is still settling the write): the newest wins.
  const eventFor = db.prepare<[string], { type: string; error: string | null }>(
    `SELECT type, json_extract(data_json, '$.error') AS error FROM webhook_events
     WHERE type IN ('intelligence.processed', 'intelligence.failed') AND CAST(json_extract(data_json, '$.entry_id') AS TEXT) = ?
     ORDER BY sent_at DESC, received_at DESC LIMIT 1`,
  );
  const toEntry = (r: Row): TrackedEntry => entryOfRow(r, blobToSha(r.sha256), r.source_id === null ? null : sources.nameOf(r.source_id));
  return {
    /** Every entry the dataset is known to hold, keyed by the SHA-256 of its content. */
    trackedEntries(): Map<string, TrackedEntry> {
      return new Map(all.all().map((r) => [blobToSha(r.sha256), toEntry(r)]));
    },
    /** Records written entries (call in the transaction that settles their write). */
    recordEntries(entries: readonly EntryRecord[]): void {
      const at = nowMs();
      for (const e of entries) {
        upsert.run(
          shaToBlob(e.sha256),
          e.agentId,
          e.remoteId,
          toEntryStatus(e.status),
          e.source === null ? null : sources.idOf(e.source),
          e.path,
          e.title,
          at,
        );
        const seen = e.remoteId === '' ? undefined : eventFor.get(e.remoteId);
        if (seen !== undefined) {
          const failed = seen.type === 'intelligence.failed';
          setStatus.run(failed ? 'failed' : 'processed', failed ? seen.error : null, at, e.remoteId);
        }
      }
    },
    /** Sets the status of the entry with this service id (an `intelligence.*` webhook); returns how many rows changed. */
    setEntryStatus(remoteId: string, status: EntryStatus, error: string | null): number {
      return setStatus.run(status, error, nowMs(), remoteId).changes;
    },
  };
}
