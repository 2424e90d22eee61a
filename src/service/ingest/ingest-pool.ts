import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import { isSupportedFileName } from '../../shared/file-types.js';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';
import type { ChunkInput } from '../store/chunks.js';
import { startThreadpoolHere } from './background-priority.js';
import { DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from './chunk-options.js';
import type { BatchOptions, ChunkSource } from './chunk-source.js';
import type { IngestReply, IngestTask, TaskFailure } from './ingest-messages.js';
import { DEFAULT_PARSE_MEMORY_LIMIT_MB, DEFAULT_PARSE_TIME_LIMIT_MS } from '../../shared/parse-limits.js';
import { parseFailed } from './parse-error.js';
import type { ParseOptions } from './types.js';

/** The limits of one file's parse, each documented in docs/service.md with the error it gives. */
export type IngestLimits = {
  /** Worker threads that parse, at most one file each at a time. @default os.availableParallelism() */
  workers?: number;
  /** Longest a file's parse and chunking may take (time spent writing its chunks not counted). @default 300 000 */
  timeLimitMs?: number;
  /** Largest JavaScript heap (old generation) of a parsing worker, in MB. @default 1024 */
  memoryLimitMb?: number;
  /** A worker with nothing to do for this long ends, giving its memory back; the next file starts another. @default 5000 */
  idleExitMs?: number;
};

const DEFAULT_IDLE_EXIT_MS = 5000;
const WORKER_ENTRY = workerEntry('ingest-worker', import.meta.url);

export type IngestPool = ChunkSource & { readonly size: number };

type Slot = { worker: Worker | undefined; ready: Promise<void>; busy: boolean; idleTimer: NodeJS.Timeout | undefined };

/** The default number of parsing workers: one per core the process may use. */
export function defaultIngestWorkers(): number {
  return Math.max(1, availableParallelism());
}

/**
 * Worker threads that parse and chunk (ingest-worker.ts), so that no parser runs on the thread that
 * answers requests. Each takes one task at a time under a time limit and a memory limit: a task past
 * either is stopped with its worker (a new one starts for the next task) and fails `parse_failed`
 * naming the limit. Idle workers end after `idleExitMs`, so the service's memory returns after a burst.
 */
export function createIngestPool(o: IngestLimits & { parsing: ParseOptions; chunking?: ChunkOptions } & BatchOptions): IngestPool {
  const size = Math.max(1, Math.floor(o.workers ?? defaultIngestWorkers()));
  const timeLimitMs = o.timeLimitMs ?? DEFAULT_PARSE_TIME_LIMIT_MS;
  const memoryLimitMb = o.memoryLimitMb ?? DEFAULT_PARSE_MEMORY_LIMIT_MB;
  const idleExitMs = o.idleExitMs ?? DEFAULT_IDLE_EXIT_MS;
  const chunking = o.chunking ?? DEFAULT_CHUNK_OPTIONS;
  const slots: Slot[] = Array.from({ length: size }, () => ({
    worker: undefined,
    ready: Promise.resolve(),
    busy: false,
    idleTimer: undefined,
  }));
  const waiting: ((slot: Slot) => void)[] = [];
  let closed = false;

  const timeLimitError = (): Error =>
    parseFailed(
      `parsing stopped at the time limit of ${timeLimitMs / 1000} s per file (kbsync serve --parse-time-limit); the file is too large or too complex to parse`,
    );
  const memoryLimitError = (): Error =>
    parseFailed(
      `parsing stopped at the memory limit of ${memoryLimitMb} MB per file (kbsync serve --parse-memory-limit); the file is too large or too complex to parse`,
    );

  const fromFailure = (f: TaskFailure): Error => {
    if (f.kind === 'parse_failed') return parseFailed(f.message);
    if (f.kind === 'out_of_memory') return memoryLimitError();
    return Object.assign(new Error(f.message), f.kind === 'errno' ? { code: f.code } : {});
  };

  const acquire = (): Promise<Slot> => {
    if (closed) return Promise.reject(new Error('the ingest pool is closed'));
    const free = slots.find((s) => !s.busy);
    if (free !== undefined) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => waiting.push(resolve));
  };

  const retire = (slot: Slot): void => {
    const worker = slot.worker;
    slot.worker = undefined;
    if (worker !== undefined) void worker.terminate();
  };

  const release = (slot: Slot): void => {
    const next = waiting.shift();
    if (next !== undefined) return next(slot);
    slot.busy = false;
    if (slot.worker === undefined || closed) return;
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = undefined;
      if (!slot.busy) retire(slot);
    }, idleExitMs);
    slot.idleTimer.unref();
  };

  const workerOf = (slot: Slot): Worker => {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    if (slot.worker === undefined) {
      // The worker lowers its own priority (background-priority.ts): not that of the process's threadpool.
      startThreadpoolHere();
      const worker = startWorker(WORKER_ENTRY, { resourceLimits: { maxOldGenerationSizeMb: memoryLimitMb } });
      // A worker never keeps the process alive on its own: the service's server does while it runs.
      worker.unref();
      slot.worker = worker;
      // Loading its modules is not part of any file's time: a task is posted once the worker says it is ready.
      slot.ready = new Promise<void>((resolve, reject) => {
        const onExit = (): void => reject(new Error('the ingest worker ended before it was ready'));
        const onReady = (reply: IngestReply): void => {
          if (reply.type !== 'ready') return;
          worker.off('message', onReady);
          worker.off('error', reject);
          worker.off('exit', onExit);
          resolve();
        };
        worker.on('message', onReady);
        worker.once('error', reject);
        worker.once('exit', onExit);
      });
      // Awaited by the task that started the worker; a failure is that task's.
      slot.ready.catch(() => {});
    }
    return slot.worker;
  };

  /**
   * Runs one task on a worker, yielding its replies until `last` says the task is over. The time
   * limit runs only while the worker works: not while a batch it posted is being written.
   */
  async function* session(task: IngestTask, last: (reply: IngestReply) => boolean): AsyncGenerator<IngestReply> {
    const slot = await acquire();
    let finished = false;
    let worker: Worker | undefined;
    const inbox: IngestReply[] = [];
    let failure: Error | undefined;
    let wake: (() => void) | undefined;
    const notify = (): void => {
      wake?.();
      wake = undefined;
    };
    const onMessage = (reply: IngestReply): void => {
      inbox.push(reply);
      notify();
    };
    const onError = (err: Error): void => {
      failure ??= (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY' ? memoryLimitError() : err;
      notify();
    };
    const onExit = (): void => {
      failure ??= new Error('the ingest worker ended before its task was done');
      notify();
    };
    let used = 0;
    let since = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const runClock = (): void => {
      since = performance.now();
      timer = setTimeout(() => {
        failure ??= timeLimitError();
        notify();
      }, timeLimitMs - used);
    };
    const stopClock = (): void => {
      clearTimeout(timer);
      used += performance.now() - since;
    };
    try {
      worker = workerOf(slot);
      await slot.ready;
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(task);
      runClock();
      for (;;) {
        if (failure !== undefined) throw failure;
        const reply = inbox.shift();
        if (reply !== undefined) {
          if (reply.type === 'failed') {
            finished = true;
            throw fromFailure(reply.failure);
          }
          finished = last(reply);
          if (finished) {
            stopClock();
            yield reply;
            return;
          }
          stopClock();
          yield reply;
          worker.postMessage({ type: 'more' } satisfies IngestTask);
          runClock();
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      clearTimeout(timer);
      worker?.off('message', onMessage);
      worker?.off('error', onError);
      worker?.off('exit', onExit);
      // A worker stopped at a limit, broken, or left mid-task (the service stopping) is replaced.
      if (!finished || failure !== undefined) retire(slot);
      release(slot);
    }
  }

  return {
    size,
    supports: isSupportedFileName,
    async *fileBatches(file): AsyncGenerator<ChunkInput[]> {
      const task: IngestTask = {
        type: 'file',
        path: file.storedPath,
        name: file.name,
        parsing: o.parsing,
        chunking,
        batchSize: o.batchSize,
        batchChars: o.batchChars,
      };
      for await (const reply of session(task, (r) => r.type === 'done')) if (reply.type === 'batch') yield reply.chunks;
    },
    async entryChunks(entry) {
      for await (const reply of session({ type: 'entry', title: entry.title, content: entry.content, chunking }, () => true)) {
        if (reply.type === 'entry') return reply.chunks;
      }
      throw new Error('the ingest worker ended without the entry chunks');
    },
    async close() {
      closed = true;
      await Promise.all(
        slots.map(async (slot) => {
          clearTimeout(slot.idleTimer);
          const worker = slot.worker;
          slot.worker = undefined;
          await worker?.terminate();
        }),
      );
    },
  };
}
