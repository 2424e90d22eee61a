import type { Database } from 'better-sqlite3';

/** A dataset's credit balance, or undefined when the dataset does not exist. */
export function creditsOf(db: Database, datasetId: number): number | undefined {
  const row = db.prepare('SELECT credits FROM datasets WHERE id = ?').get(datasetId) as { credits: number } | undefined;
  return row?.credits;
}

/**
 * Moves a dataset's balance by `delta` (negative for a charge) and records it in the ledger;
 * returns the new balance. Call inside the transaction that performs the paid write.
 */
export function applyCredits(
  db: Database,
  e: { datasetId: number; operation: string; delta: number; ref: string | null; createdAt: string },
): number {
  db.prepare('UPDATE datasets SET credits = credits + ? WHERE id = ?').run(e.delta, e.datasetId);
  const balance = creditsOf(db, e.datasetId) ?? 0;
  db.prepare('INSERT INTO ledger (dataset_id, operation, delta_credits, balance_after, ref, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
    e.datasetId,
    e.operation,
    e.delta,
    balance,
    e.ref,
    e.createdAt,
  );
  return balance;
}
