/**
 * Worker-thread entry of the checkpointer (checkpointer.ts): a PASSIVE checkpoint of the WAL every
 * intervalMs on a connection of its own while others write; on `stop`, a last one, and its connection closes.
 */
import Database from 'better-sqlite3';
import { workerData } from 'node:worker_threads';
import { serve } from '../../shared/worker-channel.js';
import type { CheckpointApi, CheckpointWorkerData } from './checkpointer.js';

const { path, intervalMs } = workerData as CheckpointWorkerData;
const db = new Database(path, { fileMustExist: true });
const checkpoint = (): void => {
  db.pragma('wal_checkpoint(PASSIVE)');
};
// While no other connection commits (data_version unchanged) there is nothing to checkpoint: the
// worker looks twice as late each time, up to IDLE_FACTOR × intervalMs (64 s at the default 500 ms),
// and an idle process sleeps.
const IDLE_FACTOR = 128;
// NaN: the first look checkpoints whatever the WAL holds (writes made before this worker opened).
let version = Number.NaN;
let delayMs = intervalMs;
const tick = (): void => {
  const now = db.pragma('data_version', { simple: true }) as number;
  if (now !== version) {
    version = now;
    delayMs = intervalMs;
    checkpoint();
  } else delayMs = Math.min(delayMs * 2, intervalMs * IDLE_FACTOR);
  timer = setTimeout(tick, delayMs);
};
let timer = setTimeout(tick, delayMs);
serve<CheckpointApi>({
  stop() {
    clearTimeout(timer);
    try {
      checkpoint();
    } finally {
      db.close();
    }
  },
});
