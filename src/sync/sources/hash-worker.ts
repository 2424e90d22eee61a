import { Worker } from 'node:worker_threads';
import { mtimeNsOfMs } from './fingerprint.js';
import { hashFileSync, type HashInput, type HashOutcome } from './hash-file.js';

/** Bytes read per `readSync` (the measured sweet spot). */
export const HASH_CHUNK_BYTES = 1 << 20;

/**
 * The worker's source text, built from hashFileSync itself, and started with `eval: true`.
 * Why not a worker file: the same code must run from dist/ (compiled .js) and under vitest (.ts
 * sources, which a Node 20 worker cannot load); a source string has no file to resolve. It gets
 * Node's modules through process.getBuiltinModule, which works whether the eval'd code is treated
 * as CommonJS or as an ES module.
 */
export function hashWorkerSource(): string {
  return `'use strict';
const fs = process.getBuiltinModule('node:fs');
const { createHash } = process.getBuiltinModule('node:crypto');
const { parentPort } = process.getBuiltinModule('node:worker_threads');
const deps = { openSync: fs.openSync, readSync: fs.readSync, fstatSync: fs.fstatSync, statSync: fs.statSync, closeSync: fs.closeSync, createHash,
  mtimeNsOfMs: ${mtimeNsOfMs.toString()} };
const hashFileSync = ${hashFileSync.toString()};
const buf = Buffer.allocUnsafe(${HASH_CHUNK_BYTES});
parentPort.on('message', (batch) => {
  parentPort.postMessage(batch.map((file) => hashFileSync(deps, file, buf)));
});
`;
}

/** A started hash worker: hash batches of files (several may be queued; answers come in order); stop it when done. */
export type HashWorker = {
  hashBatch(batch: readonly HashInput[]): Promise<HashOutcome[]>;
  /** Gives up on the worker (it answered nonsense): every queued batch rejects, and the thread is ended. */
  abandon(): void;
  stop(): Promise<void>;
};

/** Starts one hash worker thread. A crash of the thread rejects every batch queued to it. */
export function startHashWorker(source: string): HashWorker {
  const worker = new Worker(source, { eval: true });
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
