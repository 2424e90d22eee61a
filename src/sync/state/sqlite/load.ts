import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { channel } from '../../../shared/worker-channel.js';
import { startWorker, workerEntry } from '../../../shared/worker-entry.js';
import type { BulkRow } from './tracked-bulk.js';

const WORKER_URL = workerEntry('tracked-worker', import.meta.url);

/** The tracked-files worker's one method: each source's BULK_SQL rows by source id, read from the database at a path. */
export type TrackedApi = { read(dbPath: string): [number, BulkRow[]][] };

/**
 * Reads every source's tracked files (BULK_SQL rows) from the database at `dbPath` in a worker
 * thread with its own read-only connection, so that the read overlaps
 * what this thread does next: walking the folders. Resolves null when no worker can run (its
 * entry is missing, or it cannot start) or the worker failed; the caller then reads in-process, where
 * a damaged database gets its proper error. Nothing may write the files table until the rows are
 * used: they are a snapshot.
 */
export async function readBulkInWorker(dbPath: string): Promise<Map<number, BulkRow[]> | null> {
  if (!workerAvailable()) return null;
  let tracked;
  try {
    tracked = channel<TrackedApi>(startWorker(WORKER_URL), { name: 'tracked-files worker' });
  } catch {
    return null;
  }
  try {
    return new Map(await tracked.call('read', dbPath));
  } catch {
    return null; // the read failed, or the worker died without an answer
  } finally {
    void tracked.close();
  }
}

/**
 * Below this size the state is read in-process in less time than a worker thread takes to start
 * (a state of this size holds some tens of thousands of tracked files).
 */
export const WORKER_MIN_STATE_BYTES = 6 << 20;

/**
 * True when a state database of `bytes` is worth reading in a worker thread on a machine with
 * `cores` cores. The walk it overlaps already keeps two threads busy (the walk and its lstat
 * helper, see StatPool): a third only gains where a third core runs it. On two cores it took CPU
 * from the walk, and plans were no faster (the bench's plans of an unchanged tree).
 */
export function worthAWorker(bytes: number, cores: number = availableParallelism()): boolean {
  return bytes >= WORKER_MIN_STATE_BYTES && cores >= 3;
}

/** True when the worker's entry is beside this module (compiled, bundled, or from TypeScript sources). */
function workerAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER_URL));
}
