import { existsSync, writeFileSync } from 'node:fs';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { migrateCore } from './migrations.js';
import { migrateChunks } from './chunks.js';
import { migrateWebhooks } from './webhooks.js';
import { bindOwner } from './owners.js';
import { writeTransaction } from './write-transaction.js';

export type { Database };

/**
 * The WAL file is cut back to this size when it is next reused from its start. The checkpointer's
 * PASSIVE checkpoints cannot catch up while a large file's batches keep coming, so the WAL grows
 * through a long ingest (to several times a large file's size); without a limit SQLite keeps a WAL file at the
 * largest size it ever reached.
 */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

/** How long a statement waits for another connection's write lock (another process on the same data folder). */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the service database with WAL and foreign keys, fully migrated. `owner`:
 * the running service's instance id, written on the work it holds (store/owners.ts).
 */
export function openServiceDb(path: string, owner?: string): Database {
  // Created 0600 before SQLite opens it: the -wal and -shm files take the same mode.
  if (!existsSync(path)) writeFileSync(path, '', { mode: 0o600, flag: 'a' });
  const db = new Sqlite(path, { timeout: BUSY_TIMEOUT_MS });
  if (owner !== undefined) bindOwner(db, owner);
  try {
    db.pragma('journal_mode = WAL');
    // FULL: a charge that was answered must survive a power cut.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    // One transaction, so one sync to disk: on their own, a new database's schema statements each
    // synced (synchronous = FULL), most of a first start on a busy disk.
    writeTransaction(db, () => {
      migrateCore(db);
      migrateChunks(db);
      migrateWebhooks(db);
    })();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
