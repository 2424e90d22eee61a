import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { serve } from '../../shared/worker-channel.js';
import { mtimeNsOfMs } from './fingerprint.js';

/** Bytes read per `readSync`: larger reads gained nothing in the hashing bench, smaller ones cost syscalls. */
export const HASH_CHUNK_BYTES = 1 << 20;

/** A file to hash, with the stat fingerprint the scan saw. */
export type HashInput = { absPath: string; size: number; mtimeNs: string; inode: number };

/**
 * A hash, or why there is none: `deferred` when the file changed since the scan or while it was
 * read (or vanished): the next pass hashes it again; `unreadable` when it cannot be opened or read.
 */
export type HashOutcome = { sha256: string } | { deferred: string } | { unreadable: string };

/**
 * SHA-256 of one file, read `buf.length` bytes at a time into the reused `buf`, checked against
 * the scan's fingerprint before reading (fstat) and after (stat of the path): any difference, a
 * byte count other than the size, or a vanished path gives `deferred`, never a wrong hash.
 * Times compare as the walk recorded them (mtimeNsOfMs).
 */
export function hashFileSync(file: HashInput, buf: Uint8Array, beforeRestat?: (absPath: string) => void): HashOutcome {
  let fd: number;
  try {
    fd = openSync(file.absPath, 'r');
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'ENOENT') return { deferred: 'vanished since the scan' };
    return { unreadable: String(e.message ?? err) };
  }
  try {
    const before = fstatSync(fd);
    if (before.size !== file.size || mtimeNsOfMs(before.mtimeMs) !== file.mtimeNs || before.ino !== file.inode) {
      return { deferred: 'changed since the scan' };
    }
    const hash = createHash('sha256');
    let total = 0;
    // Read up to the size the scan saw, not on to a read of nothing: a file that grew since is told
    // by the stat after, whose size then differs; one read for a small file instead of two.
    while (total < file.size) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(n === buf.length ? buf : buf.subarray(0, n));
      total += n;
    }
    if (beforeRestat !== undefined) beforeRestat(file.absPath);
    const after = statSync(file.absPath, { throwIfNoEntry: false });
    if (after === undefined) return { deferred: 'vanished while it was hashed' };
    if (total !== file.size || after.size !== file.size || mtimeNsOfMs(after.mtimeMs) !== file.mtimeNs || after.ino !== file.inode) {
      return { deferred: 'changed while it was hashed' };
    }
    return { sha256: hash.digest('hex') };
  } catch (err) {
    return { unreadable: String((err as { message?: string }).message ?? err) };
  } finally {
    closeSync(fd);
  }
}

/**
 * What a hash thread (hash-worker.ts) answers: each batch of files with their outcomes, in order.
 * `done`, when given, is a counter in shared memory the thread adds one to as it finishes the batch:
 * a caller that cannot return to its event loop (a synchronous walk) reads it to bound what it queues.
 */
export type HashApi = { hash(req: HashRequest): HashOutcome[] };
export type HashRequest = { files: readonly HashInput[]; done: Int32Array | null };

/** A hash thread's loop (hash-worker.ts): serves HashApi on `port`, one reused buffer. */
export function serveHashBatches(port: MessagePort): void {
  const buf = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  serve<HashApi>(
    {
      hash: ({ files, done }) => {
        const outcomes = files.map((file) => hashFileSync(file, buf));
        if (done !== null) {
          Atomics.add(done, 0, 1);
          Atomics.notify(done, 0);
        }
        return outcomes;
      },
    },
    port,
  );
}
