import type { Database } from 'better-sqlite3';
import { deadOwners, ownerOf } from './owners.js';

/**
 * The processing state machine's queries (owned by service-search's worker):
 * files `queued → processing → processed | failed`, intelligence entries `pending → processed | failed`.
 * Every transition out of `processing` / `pending` is conditional on the row still being there, so a
 * row re-queued meanwhile (reprocess) is left for the next run.
 */

export type ClaimedFile = { id: number; datasetId: number; name: string; storedPath: string; attempts: number };

export type PendingEntry = {
  id: number;
  datasetId: number;
  agentId: number;
  title: string | null;
  content: string;
  sha256: string;
};

/**
 * Files left in `processing` by a service that stopped mid-file go back to `queued`; returns how many.
 * A file another running service on the data folder is processing stays its own.
 */
export function requeueProcessingFiles(db: Database, now: string): number {
  const dead = deadOwners(db, 'files', 'claimed_by', `status = 'processing'`);
  return db
    .prepare(
      `UPDATE files SET status = 'queued', claimed_by = NULL, updated_at = ?
       WHERE status = 'processing' AND (claimed_by IS NULL OR claimed_by IN (SELECT value FROM json_each(?)))`,
    )
    .run(now, dead).changes;
}

/** Atomically moves the oldest `queued` file to `processing` (attempts + 1, claimed by `db`'s owner) and returns it, or undefined. */
export function claimNextFile(db: Database, now: string): ClaimedFile | undefined {
  return db
    .prepare(
      `UPDATE files SET status = 'processing', attempts = attempts + 1, claimed_by = ?, updated_at = ?
       WHERE id = (SELECT id FROM files WHERE status = 'queued' ORDER BY id LIMIT 1) AND status = 'queued'
       RETURNING id, dataset_id AS datasetId, name, stored_path AS storedPath, attempts`,
    )
    .get(ownerOf(db), now) as ClaimedFile | undefined;
}

/** `processing → processed` with its chunk count; false when the file is no longer `processing`. */
export function markFileProcessed(db: Database, id: number, chunkCount: number, now: string): boolean {
  return (
    db
      .prepare(
        `UPDATE files SET status = 'processed', chunk_count = ?, error = NULL, updated_at = ? WHERE id = ? AND status = 'processing'`,
      )
      .run(chunkCount, now, id).changes === 1
  );
}

/** `processing → failed` with the reason; false when the file is no longer `processing`. */
export function markFileFailed(db: Database, id: number, error: string, now: string): boolean {
  return (
    db.prepare(`UPDATE files SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status = 'processing'`).run(error, now, id)
      .changes === 1
  );
}

/** `processing → queued` (the worker stopped before finishing the file). */
export function releaseFile(db: Database, id: number, now: string): void {
  db.prepare(`UPDATE files SET status = 'queued', updated_at = ? WHERE id = ? AND status = 'processing'`).run(now, id);
}

/** The oldest `pending` intelligence entry, or undefined. */
export function nextPendingEntry(db: Database): PendingEntry | undefined {
  return db
    .prepare(
      `SELECT id, dataset_id AS datasetId, agent_id AS agentId, title, content, sha256
       FROM intelligence WHERE status = 'pending' ORDER BY id LIMIT 1`,
    )
    .get() as PendingEntry | undefined;
}

/** `pending → processed`; false when the entry is no longer `pending`. */
export function markEntryProcessed(db: Database, id: number, now: string): boolean {
  return (
    db
      .prepare(`UPDATE intelligence SET status = 'processed', error = NULL, updated_at = ? WHERE id = ? AND status = 'pending'`)
      .run(now, id).changes === 1
  );
}

/** `pending → failed` with the reason; false when the entry is no longer `pending`. */
export function markEntryFailed(db: Database, id: number, error: string, now: string): boolean {
  return (
    db
      .prepare(`UPDATE intelligence SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status = 'pending'`)
      .run(error, now, id).changes === 1
  );
}
