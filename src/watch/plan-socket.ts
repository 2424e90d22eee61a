import { createConnection } from 'node:net';

/**
 * The local socket on which a running `kbsync watch` answers `kbsync plan` from what it holds in
 * memory: `<state>.watch.sock`, beside the state (its folder is 0700, the socket 0600), never in a
 * shared /tmp. The daemon greets each asker at once with a hello line (so that a daemon that is
 * stopped or hung is told from one making a plan), one JSON line asks, one JSON line answers.
 * PROTOCOL changes with any change to these lines: a daemon of another version answers with its own,
 * and the asker reads the state instead.
 */
export const PLAN_PROTOCOL = 2;

/** Longest socket path a Unix socket can bind (sun_path, less the NUL); a longer one is not served. */
export const MAX_SOCKET_PATH = 103;

export type PlanRequest = { v: number; op: 'plan'; json: boolean; all: boolean };

/** The daemon's first line to each asker, written as it accepts the connection. */
export type PlanHello = { v: number; hello: true; pid: number };

export type PlanReply =
  | {
      v: number;
      ok: true;
      pid: number;
      /** What the exit code is made of (exitCodeForRun). */
      totals: { failed: number; deferred: number };
      /** The plan's notes (stderr) and its report (stdout), as a fresh `kbsync plan` prints them. */
      notes: string[];
      out: string;
      /**
       * `memory`: the last answer, nothing having changed since; `walk`: a walk over the kept index;
       * `scope`: a walk of the folders changed since the last walk, the rest as that walk found it.
       */
      from: 'memory' | 'walk' | 'scope';
      tookMs: number;
    }
  | { v: number; ok: false; pid: number; reason: string };

/**
 * A daemon that did not answer in time: no hello within `helloMs` (stopped, hung, its event loop
 * blocked), or a hello and then no plan within `replyMs`. `pid` is the greeter's, when it greeted.
 */
export type PlanSilence = { silent: 'hello' | 'reply'; waitedMs: number; pid: number | null };

export function planSocketPath(localStatePath: string): string {
  return `${localStatePath}.watch.sock`;
}

/**
 * Asks the daemon of the state at `localStatePath` for a plan. Null when no daemon is there (no
 * socket, a stale one, a path too long to bind) or it speaks another protocol; a PlanSilence when one
 * is there and does not answer in time: the caller then reads the state itself. A daemon that cannot
 * answer now says why (`ok: false`).
 */
export function askDaemonPlan(
  localStatePath: string,
  req: Omit<PlanRequest, 'v' | 'op'>,
  timeouts: { helloMs: number; replyMs: number },
): Promise<PlanReply | PlanSilence | null> {
  const path = planSocketPath(localStatePath);
  if (path.length > MAX_SOCKET_PATH) return Promise.resolve(null);
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0);
    let hello: PlanHello | null = null;
    let done = false;
    const startedMs = Date.now();
    const finish = (answer: PlanReply | PlanSilence | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const wait = (ms: number, silent: PlanSilence['silent']): NodeJS.Timeout =>
      setTimeout(() => finish({ silent, waitedMs: Date.now() - startedMs, pid: hello?.pid ?? null }), ms);
    let timer = wait(timeouts.helloMs, 'hello');
    const socket = createConnection(path, () => socket.write(`${JSON.stringify({ v: PLAN_PROTOCOL, op: 'plan', ...req })}\n`));
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let end = buffered.indexOf(10); end >= 0 && !done; end = buffered.indexOf(10)) {
        const line = parseLine(buffered.subarray(0, end));
        buffered = buffered.subarray(end + 1);
        if (line === null || line.v !== PLAN_PROTOCOL) return finish(null);
        if (hello === null) {
          if (!('hello' in line) || line.hello !== true) return finish(null);
          hello = line;
          clearTimeout(timer);
          timer = wait(timeouts.replyMs, 'reply');
        } else finish(line as PlanReply);
      }
    });
    socket.on('error', () => finish(null));
    socket.on('close', () => finish(null));
  });
}

/** The hello line a daemon greets an asker with. */
export function helloLine(): string {
  const hello: PlanHello = { v: PLAN_PROTOCOL, hello: true, pid: process.pid };
  return `${JSON.stringify(hello)}\n`;
}

function parseLine(bytes: Buffer): (PlanReply | PlanHello) | null {
  try {
    const line = JSON.parse(bytes.toString('utf8')) as PlanReply | PlanHello;
    return typeof line === 'object' && line !== null && typeof line.v === 'number' ? line : null;
  } catch {
    return null;
  }
}
