import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { KbsyncError, type ErrorCode } from '../../../shared/errors.js';
import { startWorker, workerEntry } from '../../../shared/worker-entry.js';

/** A call from the main thread to the PostgreSQL worker: a handler's name, its arguments, and the caller's clock. */
export type BridgeRequest = { method: string; args: unknown[]; nowMs: number };
/** The worker's answer: a value, or an error to raise in the caller (a KbsyncError keeps its code). */
export type BridgeReply =
  { ok: true; value: unknown } | { ok: false; message: string; kbsyncCode: ErrorCode | null; pgCode: string | null };
/** What the worker is started with. */
export type BridgeWorkerData = { url: string; flag: SharedArrayBuffer; port: MessagePort; open: unknown };

/** The longest a call waits for the worker before the state is taken as unreachable. */
const CALL_TIMEOUT_MS = 120_000;

/** A synchronous handle on the PostgreSQL worker thread (see pg-worker.ts). */
export type SyncBridge = {
  /** Runs handler `method` in the worker and blocks this thread until it answers. */
  call<T>(method: string, args: unknown[], nowMs: number): T;
  /** Ends the worker (its connection closes; an open transaction rolls back). */
  close(): void;
};

/**
 * Starts the worker that owns the PostgreSQL connection, and makes calls to it synchronous: the
 * request is posted, this thread sleeps on a shared flag (Atomics.wait) until the worker sets it,
 * then takes the reply off the port with receiveMessageOnPort. The sync engine above the StateStore
 * seam stays synchronous; the price is one thread hop per call (docs/architecture.md has the figures).
 */
export function startBridge(url: string, open: unknown): SyncBridge {
  const flag = new SharedArrayBuffer(4);
  const signal = new Int32Array(flag);
  const { port1, port2 } = new MessageChannel();
  const data: BridgeWorkerData = { url, flag, port: port2, open };
  let worker: Worker | null = startWorker(workerEntry('pg-worker', import.meta.url), { workerData: data, transferList: [port2] });
  worker.unref();
  port1.unref();
  let workerError: string | null = null;
  worker.on('error', (err) => (workerError = err.message));
  const call = <T>(method: string, args: unknown[], nowMs: number): T => {
    if (worker === null) throw new KbsyncError('state_unavailable', `the PostgreSQL state is closed (${method})`);
    Atomics.store(signal, 0, 0);
    port1.postMessage({ method, args, nowMs } satisfies BridgeRequest);
    const deadline = Date.now() + CALL_TIMEOUT_MS;
    for (;;) {
      const waited = Atomics.wait(signal, 0, 0, 1000);
      const got = receiveMessageOnPort(port1);
      if (got !== undefined) return unwrap<T>(got.message as BridgeReply);
      if (waited === 'timed-out' && Date.now() > deadline)
        throw new KbsyncError('state_unavailable', `the PostgreSQL state did not answer ${method} within ${CALL_TIMEOUT_MS / 1000} s`);
      if (workerError !== null) throw new KbsyncError('state_unavailable', `the PostgreSQL state worker failed: ${workerError}`);
    }
  };
  return {
    call,
    close() {
      if (worker === null) return;
      try {
        call('close', [], Date.now());
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
  if (reply.kbsyncCode !== null) throw new KbsyncError(reply.kbsyncCode, reply.message);
  throw Object.assign(new Error(reply.message), reply.pgCode === null ? {} : { code: reply.pgCode });
}
