/**
 * Worker-thread entry (see load.ts): reads each source's tracked files as
 * one BULK_SQL row through a read-only connection to `workerData.dbPath`, and posts them all.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { errorText } from '../../../shared/errors.js';
import { BULK_SQL, SOURCES_SQL, type BulkRow } from './tracked.js';
import type { TrackedReply } from './load.js';

const port = parentPort;
if (port === null) throw new Error('tracked-worker.js runs as a worker thread only');
let reply: TrackedReply;
try {
  const db = new Database((workerData as { dbPath: string }).dbPath, { readonly: true, fileMustExist: true });
  try {
    const bulk = db.prepare(BULK_SQL).raw(true);
    const ids = (db.prepare(SOURCES_SQL).raw(true).all() as [number, string][]).map(([id]) => id);
    reply = { kind: 'rows', rows: ids.map((id) => [id, bulk.get(id) as BulkRow]) };
  } finally {
    db.close();
  }
} catch (err) {
  reply = { kind: 'error', message: errorText(err) };
}
port.postMessage(reply);
