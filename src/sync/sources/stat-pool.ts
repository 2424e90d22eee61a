import { lstatSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

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
  /** How long finish() waits for the helper's answer before doing its batch itself. @default 2000 */
  patienceMs?: number;  /** Test hook: the source the helper runs, given the default one (a test makes it stall or crash). */
  helperSource?: (defaultSource: string) => string;
};

/**
 * lstat for a synchronous walk, shared with one helper thread. The walk hands over each path as it
 * lists it; full batches go to the helper while it has fewer than two, and are done here otherwise,
 * so each thread takes as much as it keeps up with. On this 2-core machine two threads lstat a 100k
 * file tree in ~60% of the time one takes (bench: docs/benchmarks.md), and the Stats objects (four
 * Dates each on Node 20) are made and collected on the helper's heap.
 *
 * Everything stays synchronous on the walk's side: answers are taken with receiveMessageOnPort
 * between batches, and finish() sleeps on a shared counter the helper bumps after each answer. An
 * answer that does not come within `patienceMs` (a stuck or dead helper) is not waited for: that
 * batch is done here, the helper gets no more, and its late answer is dropped. Every path gets
 * exactly one call on the sink.
 */
export class StatPool<T> {
  private readonly sink: StatSink<T>;
  private readonly workerAfter: number;
  private readonly patienceMs: number;
  private readonly helperSource: string;
  private paths: string[] = [];
  private targets: T[] = [];
  private seen = 0;
  private helper: Helper | null = null;
  /** Set once the helper failed to start or to answer: nothing more is sent to it. */
  private helperLost = false;
  private nextId = 0;
  private readonly inFlight = new Map<number, { paths: string[]; targets: T[] }>();

  constructor(sink: StatSink<T>, options: StatPoolOptions = {}) {
    this.sink = sink;
    this.workerAfter = options.workerAfter ?? 4096;
    this.patienceMs = options.patienceMs ?? 2000;
    this.helperSource = options.helperSource?.(HELPER_SOURCE) ?? HELPER_SOURCE;
  }

  /** The lstat of `abs` goes to the sink with `target`, by the time finish() returns at the latest. */
  lstat(abs: string, target: T): void {
    this.paths.push(abs);
    this.targets.push(target);
    if (this.paths.length === BATCH) this.dispatch();
  }

  /** Does what is left, waits for the helper's answers, and stops it. */
  finish(): void {
    this.statHere(this.paths, this.targets);
    this.paths = [];
    this.targets = [];
    const helper = this.helper;
    if (helper === null) return;
    while (this.inFlight.size > 0) {
      const answered = Atomics.load(helper.answered, 0);
      this.takeAnswers(helper);
      if (this.inFlight.size === 0) break;
      if (Atomics.wait(helper.answered, 0, answered, this.patienceMs) === 'timed-out') {
        // Stuck or dead: what it holds is done here.
        this.helperLost = true;
        for (const batch of this.inFlight.values()) this.statHere(batch.paths, batch.targets);
        this.inFlight.clear();
      }
    }
    this.stopHelper(helper);
  }

  private dispatch(): void {
    const paths = this.paths;
    const targets = this.targets;
    this.paths = [];
    this.targets = [];
    this.seen += paths.length;
    if (this.helper === null && !this.helperLost && this.seen > this.workerAfter) this.helper = this.startHelper();
    const helper = this.helper;
    if (helper !== null && !this.helperLost) {
      this.takeAnswers(helper);
      if (this.inFlight.size < MAX_IN_FLIGHT) {
        const id = this.nextId++;
        this.inFlight.set(id, { paths, targets });
        helper.port.postMessage({ id, paths });
        return;
      }
    }
    this.statHere(paths, targets);
  }

  private statHere(paths: readonly string[], targets: readonly T[]): void {
    const sink = this.sink;
    for (let i = 0; i < paths.length; i++) {
      const target = targets[i] as T;
      let st;
      try {
        st = lstatSync(paths[i] as string, { throwIfNoEntry: false });
      } catch (err) {
        sink.error(target, err instanceof Error ? err.message : String(err));
        continue;
      }
      if (st === undefined || !st.isFile()) sink.gone(target);
      else sink.file(target, st.size, st.mtimeMs, st.ino);
    }
  }

  /** Applies every answer the helper has posted so far (never waits). */
  private takeAnswers(helper: Helper): void {
    for (let m = receiveMessageOnPort(helper.port); m !== undefined; m = receiveMessageOnPort(helper.port)) {
      const answer = m.message as Answer;
      const batch = this.inFlight.get(answer.id);
      if (batch === undefined) continue; // done here already, after a timeout
      this.inFlight.delete(answer.id);
      const { stats, errors } = answer;
      if (!(stats instanceof Float64Array) || stats.length !== batch.targets.length * 3 || !Array.isArray(errors)) {
        // Not an answer to this batch: trust the helper no more, and do the batch here.
        this.helperLost = true;
        this.statHere(batch.paths, batch.targets);
        continue;
      }
      const failed = new Map(errors);
      for (let i = 0; i < batch.targets.length; i++) {
        const target = batch.targets[i] as T;
        const size = stats[i * 3] as number;
        if (size >= 0) this.sink.file(target, size, stats[i * 3 + 1] as number, stats[i * 3 + 2] as number);
        else if (size === GONE) this.sink.gone(target);
        else this.sink.error(target, failed.get(i) ?? 'lstat failed');
      }
    }
  }

  private startHelper(): Helper | null {
    const { port1, port2 } = new MessageChannel();
    const answered = new Int32Array(new SharedArrayBuffer(4));
    try {
      const worker = new Worker(this.helperSource, { eval: true, workerData: { port: port2, answered }, transferList: [port2] });
      worker.unref();
      // A helper that dies is noticed by its silence (finish() stops waiting); nothing to report here.
      worker.on('error', () => {});
      return { worker, port: port1, answered };
    } catch {
      port1.close();
      this.helperLost = true;
      return null;
    }
  }

  private stopHelper(helper: Helper): void {
    helper.port.close();
    void helper.worker.terminate();
    this.helper = null;
  }
}

type Helper = { worker: Worker; port: MessagePort; answered: Int32Array };
/** The helper's answer to one batch: per path (size, mtimeMs, ino), size GONE or FAILED otherwise; FAILED ones' messages. */
type Answer = { id: number; stats: Float64Array; errors: [number, string][] };

/** Paths per batch: enough to amortise a message, small enough that the two threads finish together. */
const BATCH = 256;
/** Batches the helper holds at once: one it works on and one waiting, so it never idles. */
const MAX_IN_FLIGHT = 2;
const GONE = -1;
const FAILED = -2;

/**
 * The helper's source, run with `eval: true` (so the same code runs from dist/ and under vitest's
 * .ts sources). It gets Node's modules through process.getBuiltinModule.
 */
const HELPER_SOURCE = `'use strict';
const { lstatSync } = process.getBuiltinModule('node:fs');
const { workerData } = process.getBuiltinModule('node:worker_threads');
const { port, answered } = workerData;
port.on('message', ({ id, paths }) => {
  const stats = new Float64Array(paths.length * 3);
  const errors = [];
  for (let i = 0; i < paths.length; i++) {
    let st;
    try {
      st = lstatSync(paths[i], { throwIfNoEntry: false });
    } catch (err) {
      stats[i * 3] = ${FAILED};
      errors.push([i, err instanceof Error ? err.message : String(err)]);
      continue;
    }
    if (st === undefined || !st.isFile()) { stats[i * 3] = ${GONE}; continue; }
    stats[i * 3] = st.size;
    stats[i * 3 + 1] = st.mtimeMs;
    stats[i * 3 + 2] = st.ino;
  }
  port.postMessage({ id, stats, errors }, [stats.buffer]);
  Atomics.add(answered, 0, 1);
  Atomics.notify(answered, 0);
});
`;
