import type { Database } from 'better-sqlite3';

export type IdempotencyRow = {
  dataset_id: number;
  key: string;
  fingerprint: string | null;
  state: 'in_progress' | 'done';
  status: number | null;
  body_json: string | null;
  created_at_ms: number;
};

/** The live record for (dataset, key), after dropping it when older than `expiresBeforeMs`. */
export function findIdempotency(db: Database, datasetId: number, key: string, expiresBeforeMs: number): IdempotencyRow | undefined {
  db.prepare('DELETE FROM idempotency WHERE dataset_id = ? AND key = ? AND created_at_ms < ?').run(datasetId, key, expiresBeforeMs);
  return db.prepare('SELECT * FROM idempotency WHERE dataset_id = ? AND key = ?').get(datasetId, key) as IdempotencyRow | undefined;
}

/** Marks (dataset, key) as running. */
export function insertInProgress(db: Database, r: { datasetId: number; key: string; fingerprint: string | null; nowMs: number }): void {
  db.prepare(`INSERT INTO idempotency (dataset_id, key, fingerprint, state, created_at_ms) VALUES (?, ?, ?, 'in_progress', ?)`).run(
    r.datasetId,
    r.key,
    r.fingerprint,
    r.nowMs,
  );
}

/** Stores the successful response of a running request. */
export function completeIdempotency(
  db: Database,
  r: { datasetId: number; key: string; fingerprint: string; status: number; body: unknown },
): void {
  db.prepare(`UPDATE idempotency SET state = 'done', fingerprint = ?, status = ?, body_json = ? WHERE dataset_id = ? AND key = ?`).run(
    r.fingerprint,
    r.status,
    JSON.stringify(r.body),
    r.datasetId,
    r.key,
  );
}

/** Forgets a running request that did not succeed, so the key can be used again. */
export function releaseInProgress(db: Database, datasetId: number, key: string): void {
  db.prepare(`DELETE FROM idempotency WHERE dataset_id = ? AND key = ? AND state = 'in_progress'`).run(datasetId, key);
}

/** At start-up nothing is running: drops every `in_progress` row and every row past expiry. */
export function resetIdempotency(db: Database, expiresBeforeMs: number): void {
  db.prepare(`DELETE FROM idempotency WHERE state = 'in_progress' OR created_at_ms < ?`).run(expiresBeforeMs);
}
