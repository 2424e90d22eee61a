import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import type { Logger } from '../../shared/logger.js';
import { collectChunkGarbage } from '../store/chunks.js';
import { claimNextFile, nextPendingEntry, releaseFile, requeueProcessingFiles } from '../store/processing.js';
import { DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from './chunk-options.js';
import type { ChunkSource } from './chunk-source.js';
import { createIngestPool, releaseNativeMemory, type IngestLimits } from './ingest-pool.js';
import { processEntry, type IntelligenceEventSink } from './process-entry.js';
import { isOutOfSpace, processFile } from './process-file.js';
import type { ParseOptions, Parser } from './types.js';

export type { IntelligenceEventEntry, IntelligenceEventKind, IntelligenceEventSink } from './process-entry.js';

export type ProcessingWorkerOptions = {
  db: Database;
  logger: Logger;
  /** Called after an entry's status change is committed; a throwing handler is logged, never fatal. */
  onIntelligenceEvent: IntelligenceEventSink;
  chunking?: ChunkOptions;
  parsing?: ParseOptions;
  /** With nothing to do, look again this often even without a kick (a safety net), twice as long after each empty look up to 8 times this. @default 2000 */
  idlePollMs?: number;
  /** After an unexpected error (database busy), wait this long before the next try. @default 250 */
  retryDelayMs?: number;
  /** Most chunks written per transaction while a file is read. @default 256 */
  batchSize?: number;
  /**
   * A transaction is written once its chunks hold this many characters; with `batchSize` it bounds
   * how long one write blocks the event loop (the parse and the vectors are the workers'; the write is
   * SQLite's rows and full-text index). @default 128 KiB
   */
  batchChars?: number;
  /** Retired chunks deleted per transaction when there is nothing else to do. @default 200 */
  garbageBatch?: number;
  /** The ingest pool's workers and limits (docs/service.md). */
  limits?: IngestLimits;
  /**
   * Tests only: parsers of their own, run on this thread one file at a time instead of in the pool.
   * @default the registry's parsers, in the ingest pool's worker threads
   */
  parserFor?: (fileName: string) => Parser | undefined;
  now?: () => Date;
};

export type ProcessingWorker = {
  /** Re-queues files left in `processing` by a previous run, then works through the queue. */
  start(): void;
  /** Stops after the current item (a large file is put back in the queue at its next batch). */
  stop(): Promise<void>;
  /** Wakes the worker now (call after an upload, reprocess or intelligence write). */
  kick(): void;
  /** Resolves once the worker has found nothing left to do (tests, graceful flows). */
  whenIdle(): Promise<void>;
};

/**
 * The background processor: intelligence entries before files (they are small and someone may be
 * waiting for their webhook). Parsing and chunking run in the ingest pool's worker threads, as many
 * items at a time as it has workers; this thread claims items and writes their chunks. With the
 * queues empty it sleeps until `kick()` or the idle poll.
 */
/** Idle, the poll doubles after each empty look up to this many times idlePollMs (64 s at the default 2 s). */
const IDLE_POLL_FACTOR = 32;

export function createProcessingWorker(opts: ProcessingWorkerOptions): ProcessingWorker {
  const { db, logger } = opts;
  const idlePollMs = opts.idlePollMs ?? 2000;
  const retryDelayMs = opts.retryDelayMs ?? 250;
  const now = (): string => (opts.now?.() ?? new Date()).toISOString();
  const chunking = opts.chunking ?? DEFAULT_CHUNK_OPTIONS;
  const garbageBatch = opts.garbageBatch ?? 200;
  const parsing = opts.parsing ?? {};
  const batches = { batchSize: opts.batchSize ?? 256, batchChars: opts.batchChars ?? 128 * 1024 };
  // Once a burst's last parse has ended: SQLite's page cache first (after a burst it holds a share of
  // malloc's main heap, which no trim gives back while it is in use), then the pool's own
  // release. The next query reads its pages again from the OS's cache.
  const onIdle = (): void => {
    db.pragma('shrink_memory');
    releaseNativeMemory();
  };
  const custom = opts.parserFor;
  let source: ChunkSource | undefined;
  let lanes = 1;
  if (custom === undefined) {
    const pool = createIngestPool({ onIdle, ...opts.limits, parsing, chunking, ...batches });
    source = pool;
    lanes = pool.size;
  }
  // Parsers given by a test run here; loaded on first use so the service's own start never loads the chunker.
  const sourceReady = async (): Promise<ChunkSource> => {
    if (source !== undefined) return source;
    const { inlineChunkSource } = await import('./chunk-source.js');
    source = inlineChunkSource(custom ?? (() => undefined), { parsing, chunking, ...batches });
    return source;
  };
  let stopping = false;
  let loop: Promise<void> | undefined;
  let kicked = false;
  let idle = false;
  let wake: (() => void) | undefined;
  let idleWaiters: (() => void)[] = [];
  const inFlight = new Set<Promise<void>>();
  let entryInFlight = false;
  let failedLately = false;
  // After the disk filled: how long the worker waits before it claims again (doubling, at most 30 s).
  let noSpaceMs = 0;
  // Files claimed whose release failed too (the disk still full): released again before the next claim.
  const stranded = new Set<number>();
  const outOfSpace = (): void => {
    noSpaceMs = Math.min(Math.max(noSpaceMs * 2, 1000), 30_000);
    failedLately = true;
  };
  let idleFor = idlePollMs;

  const isStopping = (): boolean => stopping;
  const onEvent = opts.onIntelligenceEvent;

  const settleIdle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = undefined;
        idle = false;
        resolve();
      }
      wake = done;
    });

  const track = (work: Promise<unknown>): void => {
    const p: Promise<void> = work.then(
      () => {},
      (err: unknown) => {
        logger.error({ err }, 'processing worker step failed');
        failedLately = true;
      },
    );
    const done = p.finally(() => {
      inFlight.delete(done);
      wake?.();
    });
    inFlight.add(done);
  };

  /** Starts the next item when there is one; false when there was none. */
  const startNext = async (): Promise<boolean> => {
    const src = await sourceReady();
    // Entries one at a time, and no file claimed while one is pending.
    const entry = nextPendingEntry(db);
    if (entry !== undefined) {
      if (entryInFlight) return false;
      entryInFlight = true;
      track(processEntry({ db, logger, source: src, now, onEvent, isStopping }, entry).finally(() => (entryInFlight = false)));
      return true;
    }
    const file = claimNextFile(db, now());
    if (file === undefined) return false;
    track(
      processFile({ db, logger, source: src, now, isStopping }, file).then(
        (outcome) => {
          if (outcome === 'no-space') outOfSpace();
          else noSpaceMs = 0;
          logger.debug({ fileId: file.id, outcome }, 'file processed');
        },
        (err: unknown) => {
          stranded.add(file.id);
          if (isOutOfSpace(err)) outOfSpace();
          throw err;
        },
      ),
    );
    return true;
  };

  /** Waits until an item in flight ends, or a kick. */
  const untilChange = (): Promise<void> =>
    new Promise((resolve) => {
      wake = () => {
        wake = undefined;
        resolve();
      };
    });

  const run = async (): Promise<void> => {
    while (!stopping) {
      kicked = false;
      let started = false;
      try {
        for (const id of stranded) {
          releaseFile(db, id, now());
          stranded.delete(id);
        }
        while (!stopping && inFlight.size < lanes && (await startNext())) started = true;
        // Idle work: delete the chunks that replaced or stopped generations left behind, a batch at a time.
        if (!started && inFlight.size === 0 && collectChunkGarbage(db, garbageBatch) > 0) started = true;
      } catch (err) {
        logger.error({ err }, 'processing worker step failed');
        failedLately = true;
      }
      if (stopping) break;
      if (failedLately) {
        failedLately = false;
        await sleep(noSpaceMs > 0 ? noSpaceMs : retryDelayMs);
        continue;
      }
      if (inFlight.size > 0) {
        await untilChange();
        continue;
      }
      if (started || kicked) {
        idleFor = idlePollMs;
        await nextTurn();
        continue;
      }
      idle = true;
      settleIdle();
      // An idle process wakes rarely: each empty look waits longer (a kick still wakes it at once).
      await sleep(idleFor);
      idleFor = Math.min(idleFor * 2, idlePollMs * IDLE_POLL_FACTOR);
    }
    await Promise.all(inFlight);
    idle = true;
    settleIdle();
  };

  return {
    start() {
      if (loop !== undefined) return;
      stopping = false;
      const requeued = requeueProcessingFiles(db, now());
      if (requeued > 0) logger.info({ requeued }, 'interrupted files re-queued');
      loop = run();
    },
    async stop() {
      stopping = true;
      wake?.();
      // Ends the parses under way: their files go back to the queue (processFile sees the stop).
      await source?.close();
      await loop;
      loop = undefined;
      source = custom === undefined ? createIngestPool({ onIdle, ...opts.limits, parsing, chunking, ...batches }) : undefined;
    },
    kick() {
      kicked = true;
      idle = false;
      wake?.();
    },
    whenIdle() {
      if (loop === undefined || (idle && !kicked)) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
