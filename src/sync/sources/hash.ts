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
  /** Test hook, in-process only: runs after a file is read and before it is stat'ed again. */
  beforeRestat?: (absPath: string) => void;
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
 * small pool of worker threads (largest files first) or in-process for small batches.
 */
export async function hashFiles(files: readonly HashInput[], options: HashOptions = {}): Promise<Map<string, HashOutcome>> {
  const results = new Map<string, HashOutcome>();
  if (files.length === 0) return results;
  const mode = options.mode ?? 'auto';
  const totalBytes = files.reduce((sum, f) => sum + f.size, 0);
  const small = files.length < IN_PROCESS_MAX_FILES || totalBytes < IN_PROCESS_MAX_BYTES;
  if (mode === 'in-process' || (mode === 'auto' && small)) {
    const buf = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
    for (const file of files) results.set(file.absPath, hashFileSync(nodeDeps, file, buf, options.beforeRestat));
    return results;
  }
  await hashInWorkers(files, Math.max(1, options.concurrency ?? 2), results);
  return results;
}

async function hashInWorkers(files: readonly HashInput[], concurrency: number, results: Map<string, HashOutcome>): Promise<void> {
  const queue = [...files].sort((a, b) => b.size - a.size);
  let next = 0;
  const takeBatch = (): HashInput[] => {
    const batch: HashInput[] = [];
    let bytes = 0;
    while (next < queue.length && batch.length < BATCH_MAX_FILES && (batch.length === 0 || bytes < BATCH_MAX_BYTES)) {
      const file = queue[next++] as HashInput;
      batch.push(file);
      bytes += file.size;
    }
    return batch;
  };

  const source = hashWorkerSource();
  const workers: HashWorker[] = [];
  try {
    for (let i = 0; i < Math.min(concurrency, queue.length); i++) workers.push(startHashWorker(source));
    await Promise.all(
      workers.map(async (worker) => {
        for (let batch = takeBatch(); batch.length > 0; batch = takeBatch()) {
          const outcomes = await worker.hashBatch(batch);
          batch.forEach((file, i) => results.set(file.absPath, outcomes[i] ?? { unreadable: 'no result from hash worker' }));
        }
      }),
    );
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}
