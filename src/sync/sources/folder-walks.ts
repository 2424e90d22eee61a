import { Worker } from 'node:worker_threads';
import { KbsyncError } from '../../shared/errors.js';
import { scanFolder, type FolderSourceSpec, type ScanResult } from './folder.js';
import { unpackScan } from './scan-codec.js';
import type { WalkReply } from './walk-reply.js';

/** Where folder walks run: a worker thread, or this thread (`auto`, `in-process`), see startFolderWalks. */
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
 * Starts walking `specs` and returns at once. `auto` (and `in-process`) walk on this thread, lazily,
 * when a result is asked for: for a one-shot command that is the fastest, since the walk is the
 * critical path and this thread would only wait for a worker (measured: a worker walk costs
 * ~150 ms of start-up and packing, and ran slower beside this thread on a 2-core machine).
 * `worker` walks in a worker thread, keeping this thread's event loop free meanwhile (for a
 * long-running process); a crashed or unstartable worker falls back to walking here.
 */
export function startFolderWalks(specs: readonly FolderSourceSpec[], thread: WalkThread = 'auto'): FolderWalks {
  return specs.length > 0 && thread === 'worker' ? walkInWorker(specs) : walkLazily(specs);
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
