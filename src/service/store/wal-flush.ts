import { open, type FileHandle } from 'node:fs/promises';
import type { Database } from 'better-sqlite3';

/** Flushes a database's WAL to disk from the threadpool; see `openWalFlusher`. */
export type WalFlusher = { flush(): Promise<void>; close(): Promise<void> };

/**
 * Writes that commit with `synchronous = NORMAL` (a large file's staging batches) leave their WAL
 * pages unsynced, and the next FULL commit (a query's charge, on the thread that answers requests)
 * would sync them all. Flushing the WAL after each such batch, off that thread, keeps that backlog
 * to one batch, and paces the batches to what the disk takes. A database without a WAL file (in
 * memory, or not yet written) has nothing to flush.
 */
export async function openWalFlusher(db: Database): Promise<WalFlusher> {
  let handle: FileHandle | undefined;
  if (!db.memory) handle = await open(`${db.name}-wal`, 'r').catch(() => undefined);
  return {
    async flush() {
      // The data a later FULL commit must have on disk: the file's size is SQLite's to sync.
      await handle?.datasync().catch(() => {});
    },
    async close() {
      await handle?.close().catch(() => {});
      handle = undefined;
    },
  };
}
