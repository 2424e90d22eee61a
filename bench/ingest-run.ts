import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { createProcessingWorker } from '../src/service/ingest/worker.js';
import { silentLogger } from '../src/shared/logger.js';

/** One timed ingest: its wall time, the event loop's longest stall, and how to stop its worker. */
export type IngestRun = { seconds: number; maxLoopDelayMs: number; stop(): Promise<void> };

/**
 * Processes every queued file of a service database with one worker, timing it and watching the event
 * loop; the worker is left running for the caller to stop (after it has read what it measures).
 */
export async function timeIngest(db: Database): Promise<IngestRun> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const worker = createProcessingWorker({ db, logger: silentLogger(), onIntelligenceEvent: () => {} });
  delay.enable();
  const started = performance.now();
  // The ingest pool's threads do not keep a process alive (a command that embeds the service must be
  // able to end); in a service the HTTP server does. Here nothing else would: without this timer the
  // process ended mid-parse, its wait unsettled (exit 13), and the benchmark's figures were missing.
  const keepAlive = setInterval(() => {}, 60_000);
  worker.start();
  worker.kick();
  await worker.whenIdle().finally(() => clearInterval(keepAlive));
  const seconds = (performance.now() - started) / 1000;
  // The histogram's timer notices a stall only when it next fires: give it the chance.
  await sleep(20);
  delay.disable();
  return { seconds, maxLoopDelayMs: delay.max / 1e6, stop: () => worker.stop() };
}
