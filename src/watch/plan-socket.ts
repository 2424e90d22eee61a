import { createConnection } from 'node:net';

/**
 * The local socket on which a running `kbsync watch` answers `kbsync plan` from what it holds in
 * memory: `<state>.watch.sock`, beside the state (its folder is 0700, the socket 0600), never in a
 * shared /tmp. One JSON line asks, one JSON line answers. PROTOCOL changes with any change to either
 * line: a daemon of another version answers with its own, and the asker reads the state instead.
 */
export const PLAN_PROTOCOL = 1;

/** Longest socket path a Unix socket can bind (sun_path, less the NUL); a longer one is not served. */
export const MAX_SOCKET_PATH = 103;

export type PlanRequest = { v: number; op: 'plan'; json: boolean; all: boolean };

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
      /** `memory`: the last answer, nothing having changed since; `walk`: a walk over the kept index. */
      from: 'memory' | 'walk';
      tookMs: number;
    }
  | { v: number; ok: false; pid: number; reason: string };

export function planSocketPath(localStatePath: string): string {
  return `${localStatePath}.watch.sock`;
}

/**
 * Asks the daemon of the state at `localStatePath` for a plan. Null when no daemon answers (no
 * socket, a stale one, a path too long to bind), when it answers late (`timeoutMs`), or in another
 * protocol: the caller then reads the state itself. A daemon that cannot answer now says why (`ok: false`).
 */
export function askDaemonPlan(localStatePath: string, req: Omit<PlanRequest, 'v' | 'op'>, timeoutMs: number): Promise<PlanReply | null> {
  const path = planSocketPath(localStatePath);
  if (path.length > MAX_SOCKET_PATH) return Promise.resolve(null);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (reply: PlanReply | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(reply !== null && reply.v === PLAN_PROTOCOL ? reply : null);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    const socket = createConnection(path, () => socket.write(`${JSON.stringify({ v: PLAN_PROTOCOL, op: 'plan', ...req })}\n`));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunk.includes(10)) finish(parseReply(Buffer.concat(chunks)));
    });
    socket.on('error', () => finish(null));
    socket.on('close', () => finish(null));
  });
}

function parseReply(bytes: Buffer): PlanReply | null {
  try {
    const reply = JSON.parse(bytes.toString('utf8', 0, bytes.indexOf(10))) as PlanReply;
    return typeof reply === 'object' && reply !== null && typeof reply.v === 'number' ? reply : null;
  } catch {
    return null;
  }
}
