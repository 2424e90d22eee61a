import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { KbsyncError } from '../../../shared/errors.js';
import { fromWire, type WireError } from '../../../shared/worker-channel.js';
import { startWorker, workerEntry } from '../../../shared/worker-entry.js';

/** A call from the main thread to the PostgreSQL worker: a handler's name, its arguments, and the caller's clock. */
export type BridgeRequest = { method: string; args: unknown[]; nowMs: number };
/**
 * The worker's answer: a value, or an error to raise in the caller, as the worker channel's (a KbsyncError keeps its code, a PostgreSQL error its SQLSTATE).
 * A streamed answer (a handler that yields) comes as parts (`more`), then a last reply.
 */
export type BridgeReply = { ok: true; value: unknown; more?: true } | { ok: false; error: WireError };
/** What the worker is started with. */
export type BridgeWorkerData = { url: string; flag: SharedArrayBuffer; port: MessagePort; open: unknown };

/** The longest a call waits for the worker before the state is taken as unreachable. */
const CALL_TIMEOUT_MS = 120_000;
/** How long the worker's heartbeat may stand still before the worker is taken as dead (see BridgeOptions). */
const STALL_MS = 30_000;

/**
 * The words of the shared buffer: the reply flag the main thread sleeps on; a word the worker sets
 * when it dies (an uncaught error, or its exit); and a heartbeat the worker bumps while its event loop runs.
 */
export const WORD = { reply: 0, dead: 1, beat: 2 } as const;
/** The shared buffer's size: one Int32 per WORD. */
const WORDS = 3;
/** How often the worker bumps WORD.beat. */
export const BEAT_MS = 250;

/** For tests: another worker code (a wrapper of the real entry), and a shorter heartbeat stall. */
export type BridgeOptions = { worker?: (entry: URL) => URL | string; stallMs?: number };

/** A synchronous handle on the PostgreSQL worker thread (see pg-worker.ts). */
export type SyncBridge = {
  /** Runs handler `method` in the worker and blocks this thread until it answers. */
  call<T>(method: string, args: unknown[], nowMs: number): T;
  /** Runs a handler that yields parts: `onPart` takes each as it comes (the worker reads the next meanwhile); blocks until the last. */
  stream<P>(method: string, args: unknown[], nowMs: number, onPart: (part: P) => void): void;
  /** Ends the worker (its connection closes; an open transaction rolls back). */
  close(): void;
};

/**
 * Starts the worker that owns the PostgreSQL connection, and makes calls to it synchronous: the
 * request is posted, this thread sleeps on a shared flag (Atomics.wait) until the worker sets it,
 * then takes the reply off the port with receiveMessageOnPort. The sync engine above the StateStore
 * seam stays synchronous; the price is one thread hop per call (docs/benchmarks.md has the figures).
 *
 * Asleep in Atomics.wait, this thread sees none of the worker's events ('error', 'exit'). So a worker
 * that dies says so in the shared buffer (pg-worker.ts: its uncaught-error and exit handlers post a
 * failure and set WORD.dead, waking this thread), and one that dies without running any code (out of
 * memory, killed) stops its heartbeat: either way the waiting call fails at once, or after `stallMs`,
 * with `state_unavailable`, never at the 120 s timeout, never as a success.
 */
export function startBridge(url: string, open: unknown, options: BridgeOptions = {}): SyncBridge {
  const flag = new SharedArrayBuffer(4 * WORDS);
  const signal = new Int32Array(flag);
  const stallMs = options.stallMs ?? STALL_MS;
  const { port1, port2 } = new MessageChannel();
  const data: BridgeWorkerData = { url, flag, port: port2, open };
  const entry = workerEntry('pg-worker', import.meta.url);
  let worker: Worker | null = startWorker(options.worker?.(entry) ?? entry, { workerData: data, transferList: [port2] });
  worker.unref();
  port1.unref();
  let workerError: string | null = null;
  worker.on('error', (err) => (workerError = err.message));
  const dead = (method: string): KbsyncError =>
    new KbsyncError(
      'state_unavailable',
      `the PostgreSQL state worker ${workerError === null ? 'ended' : `failed (${workerError})`} before it answered ${method}`,
    );
  // Set when a call gave up on a worker that may still run (no heartbeat, the timeout): its late
  // reply must not be taken as the next call's, so every later call fails too.
  let broken: string | null = null;
  const giveUp = (message: string): KbsyncError => {
    broken = message;
    void worker?.terminate();
    return new KbsyncError('state_unavailable', message);
  };
  const call = <T>(method: string, args: unknown[], nowMs: number, onPart?: (part: unknown) => void): T => {
    if (worker === null) throw new KbsyncError('state_unavailable', `the PostgreSQL state is closed (${method})`);
    if (Atomics.load(signal, WORD.dead) !== 0 || workerError !== null) throw dead(method);
    if (broken !== null) throw new KbsyncError('state_unavailable', `the PostgreSQL state is unavailable (${broken}); ${method} not run`);
    Atomics.store(signal, WORD.reply, 0);
    port1.postMessage({ method, args, nowMs } satisfies BridgeRequest);
    let deadline = Date.now() + CALL_TIMEOUT_MS;
    let beat = Atomics.load(signal, WORD.beat);
    let beatAt = Date.now();
    let peeked: { message: unknown } | undefined;
    const port1HasMore = (): boolean => (peeked = receiveMessageOnPort(port1)) !== undefined;
    for (;;) {
      const got = peeked ?? receiveMessageOnPort(port1);
      peeked = undefined;
      if (got !== undefined) {
        const reply = got.message as BridgeReply;
        if (!reply.ok || reply.more !== true || onPart === undefined) return unwrap<T>(reply);
        // Cleared before the next look at the port: a part posted after it sets the flag again.
        Atomics.store(signal, WORD.reply, 0);
        onPart(reply.value);
        [deadline, beatAt] = [Date.now() + CALL_TIMEOUT_MS, Date.now()];
        continue;
      }
      const waited = Atomics.wait(signal, WORD.reply, 0, Math.min(1000, stallMs));
      // A dying worker posts its failure before it sets the word: the top of the loop takes it, or any part before it.
      if (Atomics.load(signal, WORD.dead) !== 0 && !port1HasMore()) throw dead(method);
      const at = Date.now();
      if (Atomics.load(signal, WORD.beat) !== beat) [beat, beatAt] = [Atomics.load(signal, WORD.beat), at];
      else if (at - beatAt >= stallMs)
        throw giveUp(`the PostgreSQL state worker stopped running (no heartbeat for ${stallMs / 1000} s) during ${method}`);
      if (waited === 'timed-out' && at > deadline)
        throw giveUp(`the PostgreSQL state did not answer ${method} within ${CALL_TIMEOUT_MS / 1000} s`);
    }
  };
  return {
    call: (method, args, nowMs) => call(method, args, nowMs),
    stream: (method, args, nowMs, onPart) => void call(method, args, nowMs, onPart as (part: unknown) => void),
    close() {
      if (worker === null) return;
      try {
        // A dead or stuck worker has nothing to close: its connection went with it, or goes as it is ended.
        if (broken === null && Atomics.load(signal, WORD.dead) === 0) call('close', [], Date.now());
      } finally {
        void worker.terminate();
        worker = null;
        port1.close();
      }
    },
  };
}

function unwrap<T>(reply: BridgeReply): T {
  if (reply.ok) return reply.value as T;
  throw fromWire(reply.error);
}
