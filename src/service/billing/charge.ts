import type { Database } from 'better-sqlite3';
import { costOf, type Operation } from '../../shared/plans.js';
import { applyCredits, creditsOf } from '../store/ledger.js';
import { ServiceError } from '../service-error.js';
import { writeTransaction } from '../store/write-transaction.js';

/** What a paid write produced: the operation (its cost follows from it) and the response to send. */
export type PaidWrite<T> = { op: Operation; ref: string | null; status: number; respond: (credits: number) => T };

/** Hooks run inside the charge's transaction after the balance moved (e.g. storing an idempotent response). */
export type OnCharged = (response: { status: number; body: unknown }) => void;

/** Throws 402 `insufficient_credits` unless the dataset holds at least `cost` credits. */
export function assertBalance(db: Database, datasetId: number, cost: number): void {
  const balance = creditsOf(db, datasetId) ?? 0;
  if (balance < cost) {
    throw new ServiceError('insufficient_credits', `this operation costs ${cost} credits; the balance is ${balance}`);
  }
}

/**
 * Runs a paid write and its charge in ONE transaction: the write, then the balance check for the
 * cost it turned out to have, then the ledger row and the balance update. A short balance throws
 * 402 and rolls the write back, so nothing is written and nothing is charged.
 */
export function commitPaid<T>(
  db: Database,
  p: { datasetId: number; now: string; onCharged?: OnCharged },
  write: () => PaidWrite<T>,
): { status: number; body: T; credits: number } {
  return writeTransaction(db, () => {
    const result = write();
    const credits = costOf(result.op);
    assertBalance(db, p.datasetId, credits);
    if (credits > 0) {
      applyCredits(db, { datasetId: p.datasetId, operation: result.op.kind, delta: -credits, ref: result.ref, createdAt: p.now });
    }
    const body = result.respond(credits);
    p.onCharged?.({ status: result.status, body });
    return { status: result.status, body, credits };
  })();
}
