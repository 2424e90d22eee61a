import type { Database } from 'better-sqlite3';
import { deadOwners, ownerOf } from './owners.js';

export type IdempotencyRow = {
  dataset_id: number;
  key: string;
  fingerprint: string | null;
  state: 'in_progress' | 'done';
  status: number | null;
  body_json: string | null;
  created_at_ms: number;
  owner: string | null;
};

/** The live record for (dataset, key), after dropping it when older than `expiresBeforeMs`. */
export function findIdempotency(db: Database, datasetId: number, key: string, expiresBeforeMs: number): IdempotencyRow | undefined {
  db.prepare('DELETE FROM idempotency WHERE dataset_id = ? AND key = ? AND created_at_ms < ?').run(datasetId, key, expiresBeforeMs);
  return db.prepare('SELECT * FROM idempotency WHERE dataset_id = ? AND key = ?').get(datasetId, key) as IdempotencyRow | undefined;
}

/** Marks (dataset, key) as running, by `db`'s owner. */
export function insertInProgress(db: Database, r: { datasetId: number; key: string; fingerprint: string | null; nowMs: number }): void {
  db.prepare(
    `INSERT INTO idempotency (dataset_id, key, fingerprint, state, created_at_ms, owner) VALUES (?, ?, ?, 'in_progress', ?, ?)`,
  ).run(r.datasetId, r.key, r.fingerprint, r.nowMs, ownerOf(db));
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

/**
 * At start-up: drops every row past expiry, and the `in_progress` rows of requests that cannot be
 * running any more (their service stopped); another running service's stay.
 */
export function resetIdempotency(db: Database, expiresBeforeMs: number): void {
  const dead = deadOwners(db, 'idempotency', 'owner', `state = 'in_progress'`);
  db.prepare(
    `DELETE FROM idempotency
     WHERE created_at_ms < ? OR (state = 'in_progress' AND (owner IS NULL OR owner IN (SELECT value FROM json_each(?))))`,
  ).run(expiresBeforeMs, dead);
}
