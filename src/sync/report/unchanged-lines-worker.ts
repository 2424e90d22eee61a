/**
 * Worker-thread entry of UnchangedLines (unchanged-lines.ts): reads the tracked files from the state
 * as loadTrackedFiles does (its own read-only connection), and posts, batch by batch, each row's
 * `--json` item as the plan of an unchanged file prints it, as UTF-8 bytes.
 */
import Database from 'better-sqlite3';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData, type MessagePort } from 'node:worker_threads';
import { errorText } from '../../shared/errors.js';
import { BULK_SQL, bySourceName, columnsOfBulkRow, SOURCES_SQL, type BulkRow } from '../state/tracked-files.js';
import { TrackedIndex } from '../tracked-index.js';
import { unchangedLine, LINES_PER_BATCH, type LinesBatch, type LinesRequest } from './unchanged-lines.js';

const { port } = workerData as { port: MessagePort };

// Idle time only: while the walk keeps both cores busy, this thread must not take CPU from it. On
// Linux a thread's nice value is its own (setpriority on its thread id); elsewhere this is skipped.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
} catch {
  // Not Linux, or not allowed: the lines are made at the normal priority.
}

port.once('message', (request: LinesRequest) => {
  try {
    post(read(request.dbPath));
  } catch (err) {
    port.postMessage({ kind: 'none', why: errorText(err) });
  }
  port.close();
});

/** The tracked index as loadTrackedFiles makes it: the same rows, in the same order. */
function read(dbPath: string): TrackedIndex {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const bulk = db.prepare(BULK_SQL).raw(true);
    const index = new TrackedIndex();
    for (const [id, source] of (db.prepare(SOURCES_SQL).raw(true).all() as [number, string][]).sort(bySourceName))
      index.addColumns(source, columnsOfBulkRow(source, bulk.get(id) as BulkRow));
    return index;
  } finally {
    db.close();
  }
}

function post(index: TrackedIndex): void {
  const rows = index.size;
  for (let start = 0; start < rows; start += LINES_PER_BATCH) {
    const count = Math.min(LINES_PER_BATCH, rows - start);
    const lines = new Array<string>(count);
    for (let i = 0; i < count; i++) lines[i] = unchangedLine(index, start + i);
    const text = lines.join('');
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
    bytes.write(text, 0);
    const offsets = new Int32Array(count + 1);
    // One byte per character while the text is ASCII (the usual case); else each line is measured.
    const ascii = bytes.length === text.length;
    for (let i = 0, at = 0; i < count; i++) {
      at += ascii ? (lines[i] as string).length : Buffer.byteLength(lines[i] as string);
      offsets[i + 1] = at;
    }
    const batch: LinesBatch = { kind: 'batch', start, rows, bytes: bytes.buffer as ArrayBuffer, offsets };
    port.postMessage(batch, [batch.bytes, offsets.buffer]);
  }
}
