import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { KbsyncError } from '../../shared/errors.js';
import { scanFolder, type FolderSourceSpec, type ScanResult } from './folder.js';
import { unpackScan } from './scan-codec.js';
import type { WalkReply } from './walk-reply.js';

/** Where folder walks run: a worker thread, this thread, or (`auto`) a worker when that pays, see startFolderWalks. */
export type WalkThread = 'auto' | 'worker' | 'in-process';

/** Folder walks started ahead of need: collect each source's result when it is wanted. */
export type FolderWalks = {
  /** The walk of this source (rejects with what the walk threw); undefined for a source not started here. */
  result(source: string): Promise<ScanResult> | undefined;
  /** Stops the walks still running; results not yet collected are dropped. Safe to call twice. */
  cancel(): void;
};

const WORKER_URL = new URL('./walk-worker.js', import.meta.url);

/**
 * Young generation of the walk thread: the walk allocates ~100k short-lived stat objects next to
 * the long-lived results, and a larger nursery means fewer copies of the survivors.
 */
const WORKER_YOUNG_GENERATION_MB = 48;

/**
 * Starts walking `specs` now and returns at once. In a worker thread the walk overlaps whatever
 * this thread does next (loading the state, say); a crashed or unstartable worker falls back to
 * walking here. In-process, the walk runs lazily, when a result is asked for.
 *
 * `auto` takes a worker only when one can run beside this thread: kbsync runs compiled (a Node 20
 * worker cannot load .ts sources) and a core is idle (1-minute load average below the cores minus
 * one). Measured on a loaded 2-core machine, a worker there cost ~150 ms of start-up and packing
 * and slowed this thread down as much as it saved.
 */
export function startFolderWalks(specs: readonly FolderSourceSpec[], thread: WalkThread = 'auto'): FolderWalks {
  const useWorker = specs.length > 0 && (thread === 'worker' || (thread === 'auto' && workerAvailable() && coreIsIdle()));
  return useWorker ? walkInWorker(specs) : walkLazily(specs);
}

function coreIsIdle(): boolean {
  const cores = availableParallelism();
  return cores >= 2 && (loadavg()[0] ?? 0) < cores - 1;
}

/** True when this module runs as compiled JS with walk-worker.js beside it. */
function workerAvailable(): boolean {
  return import.meta.url.endsWith('.js') && existsSync(fileURLToPath(WORKER_URL));
}

function walkLazily(specs: readonly FolderSourceSpec[]): FolderWalks {
  const bySource = new Map(specs.map((s) => [s.name, s]));
  return {
    result(source) {
      const spec = bySource.get(source);
      return spec === undefined ? undefined : Promise.resolve().then(() => scanFolder(spec));
    },
    cancel() {},
  };
}

type Pending = { promise: Promise<ScanResult>; settled: boolean; resolve(r: ScanResult): void; reject(e: unknown): void };

function walkInWorker(specs: readonly FolderSourceSpec[]): FolderWalks {
  const pending = new Map<string, Pending>(specs.map((s) => [s.name, pendingResult()]));
  let cancelled = false;
  const settle = (source: string, outcome: () => ScanResult): void => {
    const p = pending.get(source);
    if (p === undefined || p.settled) return;
    p.settled = true;
    try {
      p.resolve(outcome());
    } catch (err) {
      p.reject(err);
    }
  };
  // A worker that fails (or is refused) leaves its unfinished walks to this thread.
  const fallBack = (): void => {
    if (cancelled) return;
    for (const spec of specs) settle(spec.name, () => scanFolder(spec));
  };

  let worker: Worker;
  try {
    worker = new Worker(WORKER_URL, { workerData: { specs }, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
  } catch {
    return walkLazily(specs);
  }
  worker.on('message', (reply: WalkReply) => {
    if (reply.kind === 'scan') settle(reply.packed.source, () => unpackScan(reply.packed));
    else settle(reply.source, () => { throw reply.code === null ? new Error(reply.message) : new KbsyncError(reply.code, reply.message); });
  });
  worker.on('error', fallBack);
  worker.on('exit', fallBack);

  return {
    result: (source) => pending.get(source)?.promise,
    cancel() {
      if (cancelled) return;
      cancelled = true;
      for (const [source] of pending) settle(source, () => { throw new Error('folder walk cancelled'); });
      void worker.terminate();
    },
  };
}

function pendingResult(): Pending {
  let resolve!: (r: ScanResult) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<ScanResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A walk nobody collects (cancelled, or an earlier source failed) must not be an unhandled rejection.
  promise.catch(() => {});
  return { promise, settled: false, resolve, reject };
}
