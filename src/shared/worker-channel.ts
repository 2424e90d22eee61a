import { parentPort, receiveMessageOnPort, type MessagePort, type Transferable, type Worker } from 'node:worker_threads';
import { KbsyncError, type ErrorCode } from './errors.js';

/**
 * One typed request/response channel between a starter and its worker thread. `Api` maps each
 * method's name to `(request) => response`; the starter calls `channel<Api>(worker).call(name, req)`
 * and the worker answers with `serve<Api>(handlers)`. Calls carry ids, so several may be under way
 * and answered in any order; an error thrown by a handler rejects its call with its name, message
 * and code (a KbsyncError stays one); a worker that fails or exits rejects every call still waiting,
 * naming the worker and the method.
 */

/** A worker's methods: one request in, one response out (the handler may be async). */
export type WorkerApi<Api> = { [K in keyof Api]: (req: never) => unknown };
export type RequestOf<F> = F extends (req: infer R) => unknown ? R : never;
export type ResponseOf<F> = F extends (req: never) => infer R ? Awaited<R> : never;

/** An error as it crosses threads: enough to raise it again on the other side. */
export type WireError = { name: string; message: string; code: string | null; kbsync: boolean };
type Request = { id: number; method: string; req: unknown };
export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };

export function toWire(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), code: null, kbsync: false };
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, code: typeof code === 'string' ? code : null, kbsync: err instanceof KbsyncError };
}

export function fromWire(wire: WireError): Error {
  if (wire.kbsync && wire.code !== null) return new KbsyncError(wire.code as ErrorCode, wire.message);
  const err: Error & { code?: string } = new Error(wire.message);
  err.name = wire.name;
  if (wire.code !== null) err.code = wire.code;
  return err;
}

/** A response and the buffers to move (not copy) with it: return `transfer(value, [buf])` from a handler. */
export class Transferring<T> {
  readonly value: T;
  readonly list: readonly Transferable[];
  constructor(value: T, list: readonly Transferable[]) {
    this.value = value;
    this.list = list;
  }
}
export const transfer = <T>(value: T, list: readonly Transferable[]): Transferring<T> => new Transferring(value, list);

export type Handlers<Api extends WorkerApi<Api>> = {
  [K in keyof Api]: (
    req: RequestOf<Api[K]>,
  ) => ResponseOf<Api[K]> | Transferring<ResponseOf<Api[K]>> | Promise<ResponseOf<Api[K]> | Transferring<ResponseOf<Api[K]>>>;
};

/** The worker's side: answers each call posted on `port` (the parent's, by default) with its handler. */
export function serve<Api extends WorkerApi<Api>>(handlers: Handlers<Api>, port: MessagePort | null = parentPort): void {
  if (port === null) throw new Error('serve() runs in a worker thread only');
  const table = handlers as Record<string, (req: unknown) => unknown>;
  port.on('message', ({ id, method, req }: Request) => {
    const handler = Object.hasOwn(table, method) ? table[method] : undefined;
    new Promise((resolve) => {
      if (handler === undefined) throw new Error(`no method ${method} in this worker`);
      resolve(handler(req));
    }).then(
      (out) => {
        try {
          if (out instanceof Transferring) port.postMessage({ id, ok: true, value: out.value } satisfies Reply, out.list);
          else port.postMessage({ id, ok: true, value: out } satisfies Reply);
        } catch (err) {
          // An answer that cannot be cloned (a function, a class instance's methods...) fails its call, not the worker.
          port.postMessage({ id, ok: false, error: toWire(err) } satisfies Reply);
        }
      },
      (err: unknown) => port.postMessage({ id, ok: false, error: toWire(err) } satisfies Reply),
    );
  });
}

export type Settle<T> = (err: Error | null, value?: T) => void;

export type Channel<Api extends WorkerApi<Api>> = {
  /** Calls `method` in the worker; `transfer` lists the request's buffers to move rather than copy. */
  call<K extends keyof Api & string>(method: K, req: RequestOf<Api[K]>, transfer?: readonly Transferable[]): Promise<ResponseOf<Api[K]>>;
  /** call() with a callback, which take() can run synchronously: for a thread that does not return to its event loop. */
  send<K extends keyof Api & string>(
    method: K,
    req: RequestOf<Api[K]>,
    settle: Settle<ResponseOf<Api[K]>>,
    transfer?: readonly Transferable[],
  ): void;
  /** Settles now every call the worker has answered so far (never waits); needs a `port` of the starter's own. */
  take(): void;
  /** Calls still waiting for their answer. */
  readonly waiting: number;
  /** True once the worker failed, exited or was closed: every call fails from then on. */
  readonly closed: boolean;
  /** Rejects every waiting and later call (with `reason`, or "closed"), and ends the worker. */
  close(reason?: Error): Promise<void>;
};

export type ChannelOptions = {
  /** Names the worker in errors ("the hash worker exited (code 1) before it answered hash"). */
  name: string;
  /** The starter's end of a MessageChannel whose other end the worker serves, instead of the worker's own port. */
  port?: MessagePort;
  /** Neither the worker nor the port keeps the process alive. */
  unref?: boolean;
};

/** The starter's side of a worker that serve()s `Api`. */
export function channel<Api extends WorkerApi<Api>>(worker: Worker, options: ChannelOptions): Channel<Api> {
  const { name, port } = options;
  const pending = new Map<number, { method: string; settle: Settle<unknown> }>();
  let nextId = 0;
  let failure: ((method: string) => Error) | null = null;

  const failAll = (): void => {
    if (failure === null) return;
    for (const [id, p] of pending) {
      pending.delete(id);
      p.settle(failure(p.method));
    }
  };
  const onReply = (reply: Reply): void => {
    const p = pending.get(reply.id);
    if (p === undefined) return;
    pending.delete(reply.id);
    if (reply.ok) p.settle(null, reply.value);
    else p.settle(fromWire(reply.error));
  };
  const source: Worker | MessagePort = port ?? worker;
  source.on('message', onReply);
  worker.on('error', (err: Error & { code?: string }) => {
    failure ??= (method) =>
      Object.assign(
        new Error(`the ${name} failed (${err.message}) before it answered ${method}`, { cause: err }),
        err.code === undefined ? {} : { code: err.code },
      );
    failAll();
  });
  worker.once('exit', (code: number) => {
    failure ??= (method) => new Error(`the ${name} exited (code ${code}) before it answered ${method}`);
    failAll();
  });
  if (options.unref === true) {
    worker.unref();
    port?.unref();
  }

  const send: Channel<Api>['send'] = (method, req, settle, transfer) => {
    if (failure !== null) return settle(failure(method));
    const id = nextId++;
    pending.set(id, { method, settle: settle as Settle<unknown> });
    const request: Request = { id, method, req };
    try {
      source.postMessage(request, transfer);
    } catch (err) {
      pending.delete(id);
      settle(err instanceof Error ? err : new Error(String(err)));
    }
  };
  return {
    send,
    call: (method, req, transfer) =>
      new Promise((resolve, reject) =>
        send(method, req, (err, value) => (err === null ? resolve(value as ResponseOf<Api[typeof method]>) : reject(err)), transfer),
      ),
    take() {
      if (port === undefined) throw new Error('take() needs the channel to have a port of its own');
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) onReply(m.message as Reply);
    },
    get waiting() {
      return pending.size;
    },
    get closed() {
      return failure !== null;
    },
    async close(reason) {
      failure ??= () => reason ?? new Error(`the ${name} is closed`);
      failAll();
      port?.close();
      await worker.terminate();
    },
  };
}
