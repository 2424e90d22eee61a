import type { Worker } from 'node:worker_threads';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';
import type { HashInput, HashOutcome } from './hash-file.js';

/** The hash threads' entry module: serveHashBatches on its parent port. */
export const HASH_WORKER_ENTRY = workerEntry('hash-worker', import.meta.url);

/** A started hash worker: hash batches of files (several may be queued; answers come in order); stop it when done. */
export type HashWorker = {
  hashBatch(batch: readonly HashInput[]): Promise<HashOutcome[]>;
  /** Gives up on the worker (it answered nonsense): every queued batch rejects, and the thread is ended. */
  abandon(): void;
  stop(): Promise<void>;
};

/** Starts one hash worker thread running `code` (HASH_WORKER_ENTRY, or a test's stand-in). A crash of the thread rejects every batch queued to it. */
export function startHashWorker(code: URL | string = HASH_WORKER_ENTRY): HashWorker {
  const worker: Worker = startWorker(code);
  // The worker answers its messages one at a time, in order: the oldest pending batch gets each answer.
  const pending: { resolve(r: HashOutcome[]): void; reject(e: unknown): void }[] = [];
  let failure: unknown = null;
  const fail = (err: unknown): void => {
    failure ??= err;
    for (const p of pending.splice(0)) p.reject(err);
  };
  worker.on('message', (results: HashOutcome[]) => {
    pending.shift()?.resolve(results);
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`hash worker exited (code ${code})`)));

  return {
    hashBatch(batch) {
      if (failure !== null) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        pending.push({ resolve, reject });
        worker.postMessage(batch);
      });
    },
    abandon() {
      fail(new Error('hash worker abandoned'));
      void worker.terminate();
    },
    async stop() {
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}
