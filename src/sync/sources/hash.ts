import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { hashFileSync, type HashDeps, type HashInput, type HashOutcome } from './hash-file.js';
import { HASH_CHUNK_BYTES, hashWorkerSource, startHashWorker, type HashWorker } from './hash-worker.js';

export type { HashInput, HashOutcome } from './hash-file.js';

export type HashOptions = {
  /** Worker threads hashing at once. @default 2 */
  concurrency?: number;
  /** `auto` hashes small batches in-process (no worker start-up), larger ones in workers. @default "auto" */
  mode?: 'auto' | 'workers' | 'in-process';
  /** Test hook, for files hashed in-process: runs after a file is read and before it is stat'ed again. */
  beforeRestat?: (absPath: string) => void;
  /**
   * Test hook: the source worker `index` runs, given the default one (a test wraps it to make the
   * worker crash on demand). Unset in production.
   */
  workerSource?: (defaultSource: string, index: number) => string;
};

/**
 * Below either of these, hashing in-process beats starting workers (measured here: 815 files,
 * 20 MB: 100 ms in-process, 300+ ms with 2 workers; SHA-256 runs at ~500 MB/s per core).
 */
const IN_PROCESS_MAX_FILES = 8;
const IN_PROCESS_MAX_BYTES = 32 << 20;
/** A batch sent to a worker: enough to amortise the message round trip, small enough to balance. */
const BATCH_MAX_FILES = 64;
const BATCH_MAX_BYTES = 4 << 20;

const nodeDeps: HashDeps = { openSync, readSync, fstatSync, statSync, closeSync, createHash };

/**
 * SHA-256 of each file, keyed by absPath: a hash, or `deferred` (changed during or since the scan;
 * try again next pass), or `unreadable`. Files are read 1 MiB at a time into a reused buffer, by a
 * small pool of worker threads (largest files first) or in-process for small batches. Work a dying
 * worker leaves is finished by the others or in-process: every file gets its outcome.
 */
export async function hashFiles(files: readonly HashInput[], options: HashOptions = {}): Promise<Map<string, HashOutcome>> {
  const results = new Map<string, HashOutcome>();
  if (files.length === 0) return results;
  const mode = options.mode ?? 'auto';
  const totalBytes = files.reduce((sum, f) => sum + f.size, 0);
  const small = files.length < IN_PROCESS_MAX_FILES || totalBytes < IN_PROCESS_MAX_BYTES;
  if (mode === 'in-process' || (mode === 'auto' && small)) {
    hashInProcess(files, results, options.beforeRestat);
    return results;
  }
  await hashInWorkers(files, options, results);
  return results;
}

/** Hashes `files` on this thread, one reused buffer. */
function hashInProcess(files: readonly HashInput[], results: Map<string, HashOutcome>, beforeRestat?: (absPath: string) => void): void {
  const buf = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  for (const file of files) results.set(file.absPath, hashFileSync(nodeDeps, file, buf, beforeRestat));
}

/**
 * Hashes in a pool of workers. A worker that dies (crash, out of memory, killed) or answers
 * something else leaves the pool, and its batch is hashed here, never by another worker: a file
 * that kills workers cannot kill them all in turn. What is left once no worker survives is hashed
 * here too. Every worker is stopped before this returns or throws.
 */
async function hashInWorkers(files: readonly HashInput[], options: HashOptions, results: Map<string, HashOutcome>): Promise<void> {
  const takeBatch = batcher([...files].sort((a, b) => b.size - a.size));
  const workers = startWorkers(Math.min(Math.max(1, options.concurrency ?? 2), files.length), options.workerSource);
  try {
    await Promise.all(
      workers.map(async (worker) => {
        for (let batch = takeBatch(); batch.length > 0; batch = takeBatch()) {
          const outcomes = await hashInWorker(worker, batch);
          if (outcomes === null) {
            hashInProcess(batch, results, options.beforeRestat);
            return;
          }
          batch.forEach((file, i) => results.set(file.absPath, outcomes[i] as HashOutcome));
        }
      }),
    );
    for (let batch = takeBatch(); batch.length > 0; batch = takeBatch()) hashInProcess(batch, results, options.beforeRestat);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

/** Takes the next batch off `queue` on each call; an empty batch once it is drained. */
function batcher(queue: readonly HashInput[]): () => HashInput[] {
  let next = 0;
  return () => {
    const batch: HashInput[] = [];
    let bytes = 0;
    while (next < queue.length && batch.length < BATCH_MAX_FILES && (batch.length === 0 || bytes < BATCH_MAX_BYTES)) {
      const file = queue[next++] as HashInput;
      batch.push(file);
      bytes += file.size;
    }
    return batch;
  };
}

/** Up to `count` started workers: a thread that cannot start is one fewer (none: all in-process). */
function startWorkers(count: number, wrapSource: HashOptions['workerSource']): HashWorker[] {
  const source = hashWorkerSource();
  const workers: HashWorker[] = [];
  for (let i = 0; i < count; i++) {
    try {
      workers.push(startHashWorker(wrapSource?.(source, i) ?? source));
    } catch {
      // Hashing goes on with the workers that did start.
    }
  }
  return workers;
}

/** The worker's outcomes, one per file in order, or null when it died or did not answer each file. */
async function hashInWorker(worker: HashWorker, batch: readonly HashInput[]): Promise<HashOutcome[] | null> {
  try {
    const outcomes = await worker.hashBatch(batch);
    return outcomes.length === batch.length ? outcomes : null;
  } catch {
    return null;
  }
}
