import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import { isSupportedFileName } from '../../shared/file-types.js';
import { channel, type Channel } from '../../shared/worker-channel.js';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';
import { tuneMalloc, trimNativeHeap } from '../../shared/native-heap.js';
import { releaseMemory } from '../../shared/release-memory.js';
import type { ChunkInput } from '../store/chunks.js';
import { startThreadpoolHere } from './background-priority.js';
import { DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from './chunk-options.js';
import type { BatchOptions, ChunkSource } from './chunk-source.js';
import type { IngestApi } from './ingest-messages.js';
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
  /** A worker with nothing to do for this long ends, giving its memory back; the next file starts another. @default 2000 */
  idleExitMs?: number;
  /**
   * Once the last idle worker has ended: a full collection of this thread's heap, then malloc's free
   * pages given back to the system (shared/native-heap.ts), so a burst's memory does not stay.
   * @default releaseNativeMemory
   */
  onIdle?: () => void;
};

const DEFAULT_IDLE_EXIT_MS = 2000;
const WORKER_ENTRY = workerEntry('ingest-worker', import.meta.url);

export type IngestPool = ChunkSource & {
  readonly size: number;
  /** Workers alive now, busy or idle (0 once idle ones have ended). */
  readonly running: number;
};

let mallocTuned = false;

/** After a full collection, how long before malloc's free pages are given back (see releaseNativeMemory). */
const TRIM_AFTER_COLLECTION_MS = 1000;

/**
 * What a pool does by default once its last worker has ended after a burst: a full collection of
 * this thread's heap, then malloc's free pages given back, a moment later because V8's helper
 * threads free part of what the collection found (array buffers' memory) after it returns.
 */
export function releaseNativeMemory(): void {
  releaseMemory(0);
  setTimeout(trimNativeHeap, TRIM_AFTER_COLLECTION_MS).unref();
}

type Slot = {
  worker: Worker | undefined;
  ingest: Channel<IngestApi> | undefined;
  ready: Promise<void>;
  busy: boolean;
  idleTimer: NodeJS.Timeout | undefined;
};

/** The default number of parsing workers: one per core the process may use. */
export function defaultIngestWorkers(): number {
  return Math.max(1, availableParallelism());
}

/** How soon a limit whose thread has not used its CPU time yet looks again. */
const MIN_LIMIT_CHECK_MS = 25;

/** A worker thread's CPU time so far (Node 24's `worker.cpuUsage()`), or undefined where it cannot tell. */
async function cpuMsOf(worker: Worker | undefined): Promise<number | undefined> {
  if (worker === undefined || typeof worker.cpuUsage !== 'function') return undefined;
  try {
    const u = await worker.cpuUsage();
    return (u.user + u.system) / 1000;
  } catch {
    return undefined;
  }
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
  const onIdle = o.onIdle ?? releaseNativeMemory;
  const chunking = o.chunking ?? DEFAULT_CHUNK_OPTIONS;
  const slots: Slot[] = Array.from({ length: size }, () => ({
    worker: undefined,
    ingest: undefined,
    ready: Promise.resolve(),
    busy: false,
    idleTimer: undefined,
  }));
  // Tasks waiting for a free slot: given one as a task ends, failed when the pool closes.
  const waiting: { resolve: (slot: Slot) => void; reject: (err: Error) => void }[] = [];
  const closedError = (): Error => new Error('the ingest pool is closed');
  let closed = false;
  /** Workers retired whose thread has not ended yet. */
  let ending = 0;

  const timeLimitError = (): Error =>
    parseFailed(
      `parsing stopped at the time limit of ${timeLimitMs / 1000} s per file (kbsync serve --parse-time-limit); the file is too large or too complex to parse`,
    );
  const memoryLimitError = (): Error =>
    parseFailed(
      `parsing stopped at the memory limit of ${memoryLimitMb} MB per file (kbsync serve --parse-memory-limit); the file is too large or too complex to parse`,
    );

  // Out of memory: the worker's heap, or that of a thread its parser started (the office documents').
  const limitOf = (err: unknown): unknown =>
    (err as NodeJS.ErrnoException | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY' ? memoryLimitError() : err;

  const acquire = (): Promise<Slot> => {
    if (closed) return Promise.reject(closedError());
    const free = slots.find((s) => !s.busy);
    if (free !== undefined) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };

  const retire = (slot: Slot, idle = false): void => {
    const worker = slot.worker;
    slot.worker = undefined;
    slot.ingest = undefined;
    if (worker === undefined) return;
    ending++;
    void worker.terminate().then(() => {
      ending--;
      // The last worker gone idle and ended: what the burst freed (its heap, malloc's arenas) is given back.
      if (idle && !closed && ending === 0 && slots.every((s) => s.worker === undefined)) onIdle();
    });
  };

  const release = (slot: Slot): void => {
    const next = waiting.shift();
    if (next !== undefined) return next.resolve(slot);
    slot.busy = false;
    if (slot.worker === undefined || closed) return;
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = undefined;
      if (!slot.busy) retire(slot, true);
    }, idleExitMs);
    slot.idleTimer.unref();
  };

  const ingestOf = (slot: Slot): Channel<IngestApi> => {
    // A closed pool starts no thread, not even for a task that took its slot just before.
    if (closed) throw closedError();
    clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    if (slot.worker === undefined || slot.ingest === undefined) {
      // Worker threads share a few of malloc's arenas, and what a burst frees is not kept by malloc's thresholds.
      if (!mallocTuned) {
        mallocTuned = true;
        tuneMalloc();
      }
      // The worker lowers its own priority (background-priority.ts): not that of the process's threadpool.
      startThreadpoolHere();
      const worker = startWorker(WORKER_ENTRY, { resourceLimits: { maxOldGenerationSizeMb: memoryLimitMb } });
      slot.worker = worker;
      // A worker never keeps the process alive on its own: the service's server does while it runs.
      slot.ingest = channel<IngestApi>(worker, { name: 'ingest worker', unref: true });
      // Loading its modules is not part of any file's time: a task is sent once the worker has answered `ready`.
      slot.ready = slot.ingest.call('ready', undefined);
      // Awaited by the task that started the worker; a failure is that task's.
      slot.ready.catch(() => {});
    }
    return slot.ingest;
  };

  /**
   * Runs one task on a worker: `run` makes its calls through `timed`, under the time limit, which
   * counts the worker thread's CPU time: not a batch being written, nor the time a busy machine
   * keeps the thread waiting for a core, which must not fail a file for good. A task
   * stopped at a limit, on a worker that died, or left mid-task (the service stopping) has its
   * worker replaced; only that task fails, and the pool keeps its size.
   */
  async function* session<T>(
    run: (ingest: Channel<IngestApi>, timed: <R>(call: Promise<R>) => Promise<R>) => AsyncGenerator<T>,
  ): AsyncGenerator<T> {
    const slot = await acquire();
    let stopped = false;
    let keep = false;
    let startCpuMs: number | undefined;
    let wallUsed = 0;
    const timed = async <R>(call: Promise<R>): Promise<R> => {
      const since = performance.now();
      let timer: NodeJS.Timeout | undefined;
      // Armed for what is left of the limit; when it fires, the thread's CPU time says whether it is spent.
      const limit = new Promise<never>((_, reject) => {
        const arm = (leftMs: number): void => {
          timer = setTimeout(() => {
            void cpuMsOf(slot.worker).then((cpu) => {
              const used = cpu === undefined || startCpuMs === undefined ? wallUsed + performance.now() - since : cpu - startCpuMs;
              if (used < timeLimitMs) return arm(Math.max(MIN_LIMIT_CHECK_MS, timeLimitMs - used));
              stopped = true;
              reject(timeLimitError());
            });
          }, leftMs);
        };
        arm(Math.max(MIN_LIMIT_CHECK_MS, timeLimitMs - wallUsed));
      });
      try {
        return await Promise.race([call, limit]);
      } catch (err) {
        throw limitOf(err);
      } finally {
        clearTimeout(timer);
        wallUsed += performance.now() - since;
      }
    };
    let ingest: Channel<IngestApi> | undefined;
    try {
      ingest = ingestOf(slot);
      await slot.ready;
      startCpuMs = await cpuMsOf(slot.worker);
      yield* run(ingest, timed);
      keep = true;
    } catch (err) {
      // A task's own failure (parse_failed, an errno) leaves its worker as good as before.
      keep = !stopped && ingest !== undefined && !ingest.closed;
      throw err;
    } finally {
      if (!keep) retire(slot);
      release(slot);
    }
  }

  return {
    size,
    get running() {
      return slots.filter((s) => s.worker !== undefined).length;
    },
    supports: isSupportedFileName,
    async *fileBatches(file): AsyncGenerator<ChunkInput[]> {
      const task = {
        path: file.storedPath,
        name: file.name,
        parsing: o.parsing,
        chunking,
        batchSize: o.batchSize,
        batchChars: o.batchChars,
      };
      yield* session(async function* (ingest, timed) {
        // One batch ahead: the worker reads the next batch while this one is written (asked only once
        // it was written, the two threads took turns). The failure of a batch asked ahead is thrown
        // when it is awaited; the catch only keeps it from counting as unhandled meanwhile.
        let next = timed(ingest.call('file', task));
        for (let chunks = await next; chunks !== null; chunks = await next) {
          next = timed(ingest.call('more', undefined));
          next.catch(() => {});
          yield chunks;
        }
      });
    },
    async entryChunks(entry) {
      const task = { title: entry.title, content: entry.content, chunking };
      let chunks: string[] | undefined;
      // Read to its end: a session left early has its worker replaced.
      for await (const answer of session(async function* (ingest, timed) {
        yield await timed(ingest.call('entry', task));
      }))
        chunks = answer;
      if (chunks === undefined) throw new Error('the ingest worker ended without the entry chunks');
      return chunks;
    },
    async close() {
      closed = true;
      for (const w of waiting.splice(0)) w.reject(closedError());
      await Promise.all(
        slots.map(async (slot) => {
          clearTimeout(slot.idleTimer);
          const worker = slot.worker;
          slot.worker = undefined;
          slot.ingest = undefined;
          await worker?.terminate();
        }),
      );
    },
  };
}
