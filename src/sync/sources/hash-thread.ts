import { channel } from '../../shared/worker-channel.js';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';
import type { HashApi, HashInput, HashOutcome } from './hash-file.js';

/** The hash threads' entry module: serveHashBatches on its parent port. */
export const HASH_WORKER_ENTRY = workerEntry('hash-worker', import.meta.url);

/** A started hash worker: hash batches of files (several may be queued); stop it when done. */
export type HashWorker = {
  /** `done`: a shared counter the thread adds one to when this batch is hashed (see HashApi). */
  hashBatch(batch: readonly HashInput[], done?: Int32Array): Promise<HashOutcome[]>;
  /** Gives up on the worker (it answered nonsense): every queued batch rejects, and the thread is ended. */
  abandon(): void;
  stop(): Promise<void>;
};

/** Starts one hash worker thread running `code` (HASH_WORKER_ENTRY, or a test's stand-in). A crash of the thread rejects every batch queued to it. */
export function startHashWorker(code: URL | string = HASH_WORKER_ENTRY): HashWorker {
  const hashes = channel<HashApi>(startWorker(code), { name: 'hash worker' });
  return {
    hashBatch: (files, done) => hashes.call('hash', { files, done: done ?? null }),
    abandon() {
      void hashes.close(new Error('hash worker abandoned'));
    },
    stop: () => hashes.close(),
  };
}
