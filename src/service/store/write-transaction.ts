import type { Database } from 'better-sqlite3';

/** How many times a BEGIN IMMEDIATE still busy after the busy timeout (db.ts) is tried again before the error is the caller's. */
const BEGIN_RETRIES = 3;

/**
 * `fn` as a transaction that writes: BEGIN IMMEDIATE takes the write lock first, waiting for it up to
 * the busy timeout. Several processes serve one data folder (a daemon's embedded service and a
 * command's), and a deferred transaction that reads and then writes cannot wait: SQLite answers its
 * first write SQLITE_BUSY at once when another connection holds the lock or wrote since its read.
 * A BEGIN still busy after the wait is tried again; once `fn` has begun, its errors are the caller's
 * (it may have done more than SQL). Inside another transaction it is a savepoint.
 */
export function writeTransaction<A extends unknown[], R>(db: Database, fn: (...args: A) => R): (...args: A) => R {
  let began = false;
  const tx = db.transaction((...args: A): R => {
    began = true;
    return fn(...args);
  });
  return (...args: A): R => {
    for (let attempt = 0; ; attempt++) {
      began = false;
      try {
        return tx.immediate(...args);
      } catch (err) {
        if (began || attempt >= BEGIN_RETRIES || !isBusy(err)) throw err;
      }
    }
  };
}

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, _RECOVERY, _TIMEOUT). */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
