/**
 * Worker-thread entry of the checkpointer (checkpointer.ts): a PASSIVE checkpoint of the WAL every
 * intervalMs on a connection of its own; on any message, a last one, then it closes and exits.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckpointWorkerData } from './checkpointer.js';

const port = parentPort;
if (port === null) throw new Error('checkpoint-worker.js runs as a worker thread only');
const { path, intervalMs } = workerData as CheckpointWorkerData;
const db = new Database(path, { fileMustExist: true });
const checkpoint = (): void => {
  db.pragma('wal_checkpoint(PASSIVE)');
};
const timer = setInterval(checkpoint, intervalMs);
port.on('message', () => {
  clearInterval(timer);
  try {
    checkpoint();
  } finally {
    db.close();
    port.close();
  }
});
