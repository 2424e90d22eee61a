import type { Database } from 'better-sqlite3';

/** Stores an API key by its hash (the plain key never reaches the database). */
export function insertApiKey(db: Database, k: { datasetId: number; keyHash: string; prefix: string; createdAt: string }): void {
  db.prepare('INSERT INTO api_keys (dataset_id, key_hash, prefix, created_at) VALUES (?, ?, ?, ?)').run(
    k.datasetId,
    k.keyHash,
    k.prefix,
    k.createdAt,
  );
}

/** The dataset id a key hash belongs to, or undefined for an unknown key. */
export function datasetIdOfKeyHash(db: Database, keyHash: string): number | undefined {
  const row = db.prepare('SELECT dataset_id FROM api_keys WHERE key_hash = ?').get(keyHash) as { dataset_id: number } | undefined;
  return row?.dataset_id;
}
