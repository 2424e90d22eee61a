import { lstatSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { channel, serve, transfer, type Channel } from '../../shared/worker-channel.js';
import { startWorker, workerEntry } from '../../shared/worker-entry.js';

/** Where the lstat of each path goes: called once per path, from whichever thread did it. */
export type StatSink<T> = {
  /** A regular file. */
  file(target: T, size: number, mtimeMs: number, ino: number): void;
  /** Gone since it was listed, or no longer a regular file: the next pass sees it. */
  gone(target: T): void;
  error(target: T, message: string): void;
};

export type StatPoolOptions = {
  /** Paths lstat'ed here before a helper thread is started (a small walk is over before one would be ready). @default 4096 */
  workerAfter?: number;
  /** Cores to count on: with one, no helper is started (it would only take turns with the walk). @default os.availableParallelism() */
  cores?: number;
  /**
   * Test hook: how long finish() gives the helper to answer what it holds before doing it here
   * (a test of what the walk does with the helper's answers needs them). @default 0
   */
  helperGraceMs?: number;
  /** Test hook: what the helper runs instead of stat-pool-worker.js (source text: a test makes it stall or crash). */
  helper?: (entry: URL) => URL | string;
  /**
   * Keep the helper thread when the walk is over, for the next walk that keeps it too (`kbsync watch`:
   * a rescan every few minutes). Starting one costs the other core its module loading at each walk,
   * while this thread does every lstat alone; a kept one answers from the first batch. @default false
   */
  keepHelper?: boolean;
};

/** The lstats of a batch of paths: per path (size, mtimeMs, ino), or size GONE, or FAILED with the message in `errors` (by index). */
type LstatAnswer = { stats: Float64Array<ArrayBuffer>; errors: [number, string][] };
/** What the helper thread serves. */
export type StatApi = { lstat(paths: string[]): LstatAnswer };

/**
 * Every path of `batch` lstat'ed, on whichever thread runs it: size -1 when gone or no longer a
 * regular file, -2 when the lstat failed.
 */
function lstatBatch(paths: readonly string[]): LstatAnswer {
  const stats = new Float64Array(paths.length * 3);
  const errors: [number, string][] = [];
  for (let i = 0; i < paths.length; i++) {
    let st;
    try {
      st = lstatSync(paths[i] as string, { throwIfNoEntry: false });
    } catch (err) {
      stats[i * 3] = -2;
      errors.push([i, err instanceof Error ? err.message : String(err)]);
      continue;
    }
    if (st === undefined || !st.isFile()) {
      stats[i * 3] = -1;
      continue;
    }
    stats[i * 3] = st.size;
    stats[i * 3 + 1] = st.mtimeMs;
    stats[i * 3 + 2] = st.ino;
  }
  return { stats, errors };
}

/** The helper's loop (stat-pool-worker.ts): serves StatApi on `port`, each answer's stats moved, not copied. */
export function serveLstatBatches(port: MessagePort): void {
  serve<StatApi>(
    {
      lstat(paths) {
        const answer = lstatBatch(paths);
        return transfer(answer, [answer.stats.buffer]);
      },
    },
    port,
  );
}

/**
 * lstat for a synchronous walk, shared with one helper thread. The walk hands over each path as it
 * lists it; full batches go to the helper while it has fewer than four, and are done here otherwise,
 * so each thread takes as much as it keeps up with. Two threads lstat a large tree in less time than
 * one (bench: docs/benchmarks.md, sources in process), and the Stats objects (four
 * Dates each on Node 20) are made and collected on the helper's heap.
 *
 * Everything stays synchronous on the walk's side, and nothing ever waits for the helper: answers
 * are taken (the channel's take(), receiveMessageOnPort) between batches, and finish() does here whatever the helper
 * has not answered yet (its last batches first; late answers are dropped). A helper that is slow,
 * stuck or dead just gets nothing more, and one that answers nonsense is dropped. Every
 * path gets exactly one call on the sink.
 */
export class StatPool<T> {
  private readonly sink: StatSink<T>;
  private readonly workerAfter: number;
  private readonly helperGraceMs: number;
  private readonly helperCode: URL | string;
  private batch: Batch<T> = emptyBatch();
  private seen = 0;
  private helper: Helper | null = null;
  /** Set once the helper failed to start or to answer: nothing more is sent to it. */
  private helperLost = false;
  private readonly keepHelper: boolean;
  private readonly inFlight = new Map<number, Batch<T>>();
  /** Batches the helper answered (diagnostics, and tests that must see it work). */
  helperAnswers = 0;

  constructor(sink: StatSink<T>, options: StatPoolOptions = {}) {
    this.sink = sink;
    this.workerAfter = (options.cores ?? availableParallelism()) < 2 ? Number.POSITIVE_INFINITY : (options.workerAfter ?? 4096);
    this.helperGraceMs = options.helperGraceMs ?? 0;
    this.helperCode = options.helper?.(HELPER_ENTRY) ?? HELPER_ENTRY;
    this.keepHelper = options.keepHelper === true && options.helper === undefined;
  }

  /** The lstat of `abs` goes to the sink with `target`, by the time finish() returns at the latest. */
  lstat(abs: string, target: T): void {
    this.batch.paths.push(abs);
    this.batch.targets.push(target);
    if (this.batch.paths.length === BATCH) this.dispatch();
  }

  /** Does what is left, the batches the helper has not answered included, and stops the helper. */
  finish(): void {
    this.statHere(this.batch);
    this.batch = emptyBatch();
    const helper = this.helper;
    if (helper === null) return;
    this.takeAnswers(helper);
    const until = performance.now() + this.helperGraceMs;
    while (this.inFlight.size > 0 && !this.helperLost && performance.now() < until) {
      Atomics.wait(NAP, 0, 0, 1);
      this.takeAnswers(helper);
    }
    // The helper works through its batches in order: the last ones are done here, its answers taken
    // between them, until none is left. A slow or dead helper cannot hold the walk up, and the work
    // done twice (its current batch, at worst) is less than waiting would cost.
    for (let id = nextBatchId - 1; this.inFlight.size > 0; id--) {
      const batch = this.inFlight.get(id);
      if (batch === undefined) continue;
      this.inFlight.delete(id);
      this.statHere(batch);
      this.takeAnswers(helper);
    }
    this.stopHelper(helper);
  }

  private dispatch(): void {
    const batch = this.batch;
    this.batch = emptyBatch();
    this.seen += batch.paths.length;
    if (this.helper === null && !this.helperLost && (this.seen > this.workerAfter || (this.keepHelper && keptHelper !== null)))
      this.helper = this.startHelper();
    const helper = this.helper;
    if (helper !== null && !this.helperLost) {
      this.takeAnswers(helper);
      if (this.inFlight.size < MAX_IN_FLIGHT) {
        const id = nextBatchId++;
        this.inFlight.set(id, batch);
        helper.lstats.send('lstat', batch.paths, (err, answer) => this.answered(id, batch, err === null ? answer : undefined));
        return;
      }
    }
    this.statHere(batch);
  }

  private statHere(batch: Batch<T>): void {
    this.apply(batch, lstatBatch(batch.paths));
  }

  /** Hands each path's lstat to the sink. */
  private apply(batch: Batch<T>, { stats, errors }: LstatAnswer): void {
    const failed = errors.length === 0 ? null : new Map(errors);
    for (let i = 0; i < batch.targets.length; i++) {
      const target = batch.targets[i] as T;
      const size = stats[i * 3] as number;
      if (size >= 0) this.sink.file(target, size, stats[i * 3 + 1] as number, stats[i * 3 + 2] as number);
      else if (size === GONE) this.sink.gone(target);
      else this.sink.error(target, failed?.get(i) ?? 'lstat failed');
    }
  }

  /** Applies every answer the helper has posted so far (never waits). */
  private takeAnswers(helper: Helper): void {
    helper.lstats.take();
  }

  /** The helper's answer to batch `id`, or undefined when it failed (a helper that died fails every batch it holds). */
  private answered(id: number, batch: Batch<T>, answer: LstatAnswer | undefined): void {
    if (this.inFlight.get(id) !== batch) return; // done here already, after a timeout
    this.inFlight.delete(id);
    const stats = answer?.stats;
    if (!(stats instanceof Float64Array) || stats.length !== batch.targets.length * 3 || !Array.isArray(answer?.errors)) {
      // Not an answer to this batch: trust the helper no more, and do the batch here.
      this.helperLost = true;
      this.statHere(batch);
      return;
    }
    this.helperAnswers += 1;
    this.apply(batch, answer);
  }

  private startHelper(): Helper | null {
    if (this.keepHelper && keptHelper !== null) {
      const kept = keptHelper;
      keptHelper = null;
      return kept;
    }
    const { port1, port2 } = new MessageChannel();
    try {
      const worker = startWorker(this.helperCode, { workerData: { port: port2 }, transferList: [port2] });
      // A helper that dies just answers no more (the walk never waits for it); nothing to report here.
      const helper = { worker, lstats: channel<StatApi>(worker, { name: 'lstat helper', port: port1, unref: true }) };
      worker.once('exit', () => {
        if (keptHelper === helper) keptHelper = null;
      });
      return helper;
    } catch {
      port1.close();
      this.helperLost = true;
      return null;
    }
  }

  private stopHelper(helper: Helper): void {
    this.helper = null;
    if (this.keepHelper && !this.helperLost && keptHelper === null) {
      // Answers to batches done here already may still come: their ids are never used again.
      keptHelper = helper;
      return;
    }
    void helper.lstats.close();
  }
}

type Helper = { worker: Worker; lstats: Channel<StatApi> };
/** The helper a walk with keepHelper left for the next one (unref'd: it never holds the process up). */
let keptHelper: Helper | null = null;
/** Batch ids, unique in the process: a kept helper's late answer to an earlier walk's batch matches no batch of a later one. */
let nextBatchId = 0;
type Batch<T> = { paths: string[]; targets: T[] };
const emptyBatch = <T>(): Batch<T> => ({ paths: [], targets: [] });

/** Slept on (never woken) to pause a millisecond while a test's grace runs. */
const NAP = new Int32Array(new SharedArrayBuffer(4));
/** Paths per batch: enough to amortise a message, small enough that the two threads finish together. */
const BATCH = 256;
/**
 * Batches the helper holds at once: enough queued that it never idles while the walk does a batch
 * of its own (with fewer, it took a smaller share of the bench tree's lstats).
 */
const MAX_IN_FLIGHT = 4;
/** lstatBatch's size for a path gone or no longer a regular file (-2: the lstat failed). */
const GONE = -1;

/** The helper's entry module: serveLstatBatches on the port it is given. */
const HELPER_ENTRY = workerEntry('stat-pool-worker', import.meta.url);
