import type { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';
import { channel, type Channel } from '../../shared/worker-channel.js';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';

export type Checkpointer = {
  /** Stops the worker (after a last checkpoint) and gives the connection its automatic checkpoints back. */
  stop(): Promise<void>;
};

export type CheckpointerOptions = {
  /** How often the worker checkpoints the WAL. @default 500 */
  intervalMs?: number;
};

/** SQLite's default: a checkpoint after a commit that leaves the WAL over 1,000 pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/**
 * Moves the WAL checkpoints of `db` to a worker thread with its own connection. SQLite runs an
 * automatic checkpoint inside the commit that crosses 1,000 WAL pages, on the committing thread:
 * it copies the pages into the database file and syncs it, which on a busy disk held the service's
 * event loop for long stalls (the processing bench). The worker's PASSIVE checkpoints
 * never take the writer's lock, so commits go on meanwhile, and the WAL is reused from its start
 * once a checkpoint has caught up. If no worker starts, the connection keeps its automatic
 * checkpoints. Call stop() before closing `db`.
 */
export function startCheckpointer(db: Database, options: CheckpointerOptions = {}): Checkpointer {
  const intervalMs = options.intervalMs ?? 500;
  let worker: Worker;
  let checkpoints: Channel<CheckpointApi>;
  try {
    worker = startWorker(WORKER_ENTRY, { workerData: { path: db.name, intervalMs } satisfies CheckpointWorkerData });
    checkpoints = channel<CheckpointApi>(worker, { name: 'checkpoint worker', unref: true });
  } catch {
    return { stop: () => Promise.resolve() };
  }
  db.pragma('wal_autocheckpoint = 0');
  // A worker that cannot open the database (or dies) leaves the checkpoints to this connection again.
  const fallBack = (): void => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  };
  worker.on('error', fallBack);
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        worker.ref(); // until it has exited: the caller waits for that
        // A last checkpoint (a dead worker answers nothing: the connection checkpoints again).
        await checkpoints.call('stop', undefined).catch(() => {});
        await checkpoints.close();
        fallBack();
      })();
      return stopping;
    },
  };
}

/** The worker's one method: a last checkpoint, then its connection closes (the checkpointer then ends it). */
export type CheckpointApi = { stop(req: undefined): void };

/** What checkpoint-worker.ts is given. */
export type CheckpointWorkerData = { path: string; intervalMs: number };

/** The worker's entry module: a PASSIVE checkpoint every intervalMs on its own connection; a last one on `stop`. */
const WORKER_ENTRY = workerEntry('checkpoint-worker', import.meta.url);
