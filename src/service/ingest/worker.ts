import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import type { Logger } from '../../shared/logger.js';
import { collectChunkGarbage } from '../store/chunks.js';
import { claimNextFile, nextPendingEntry, requeueProcessingFiles } from '../store/processing.js';
import { DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from './chunker.js';
import { processEntry, type IntelligenceEventSink } from './process-entry.js';
import { processFile } from './process-file.js';
import { parserFor } from './registry.js';
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
  /** Most chunks written per transaction while a file is read. @default 512 */
  batchSize?: number;
  /**
   * A transaction is written once its chunks hold this many characters; with `batchSize` it bounds
   * how long one write blocks the event loop (about 10–20 ms for the default). @default 256 KiB
   */
  batchChars?: number;
  /** Retired chunks deleted per transaction when there is nothing else to do. @default 200 */
  garbageBatch?: number;
  /** Which parser reads a file name. @default the registry's parserFor */
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
 * The background processor: one item at a time, intelligence entries before files (they are small
 * and someone may be waiting for their webhook). Between items it yields to the event loop; with
 * the queues empty it sleeps until `kick()` or the idle poll.
 */
export function createProcessingWorker(opts: ProcessingWorkerOptions): ProcessingWorker {
  const { db, logger } = opts;
  const idlePollMs = opts.idlePollMs ?? 2000;
  const retryDelayMs = opts.retryDelayMs ?? 250;
  const now = (): string => (opts.now?.() ?? new Date()).toISOString();
  const chunking = opts.chunking ?? DEFAULT_CHUNK_OPTIONS;
  const garbageBatch = opts.garbageBatch ?? 200;
  let stopping = false;
  let loop: Promise<void> | undefined;
  let kicked = false;
  let idle = false;
  let wake: (() => void) | undefined;
  let idleWaiters: (() => void)[] = [];
  let idleFor = idlePollMs;

  const fileContext = {
    db,
    logger,
    chunking,
    parsing: opts.parsing ?? {},
    batchSize: opts.batchSize ?? 512,
    batchChars: opts.batchChars ?? 256 * 1024,
    parserFor: opts.parserFor ?? parserFor,
    now,
    isStopping: () => stopping,
  };
  const entryContext = { db, logger, chunking, now, onEvent: opts.onIntelligenceEvent };

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

  /** Processes one item; false when there was none. */
  const step = async (): Promise<boolean> => {
    const entry = nextPendingEntry(db);
    if (entry !== undefined) {
      processEntry(entryContext, entry);
      return true;
    }
    const file = claimNextFile(db, now());
    // Idle work: delete the chunks that replaced or stopped generations left behind, a batch at a time.
    if (file === undefined) return collectChunkGarbage(db, garbageBatch) > 0;
    const outcome = await processFile(fileContext, file);
    logger.debug({ fileId: file.id, outcome }, 'file processed');
    return true;
  };

  const run = async (): Promise<void> => {
    while (!stopping) {
      kicked = false;
      let worked: boolean;
      try {
        worked = await step();
      } catch (err) {
        logger.error({ err }, 'processing worker step failed');
        await sleep(retryDelayMs);
        continue;
      }
      if (stopping) break;
      if (worked || kicked) {
        idleFor = idlePollMs;
        await nextTurn();
        continue;
      }
      idle = true;
      settleIdle();
      // An idle process wakes rarely: each empty look waits longer (a kick still wakes it at once).
      await sleep(idleFor);
      idleFor = Math.min(idleFor * 2, idlePollMs * 8);
    }
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
      await loop;
      loop = undefined;
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
