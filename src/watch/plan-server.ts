import { chmodSync, unlinkSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { errorText } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { helloLine, MAX_SOCKET_PATH, PLAN_PROTOCOL, planSocketPath, type PlanReply, type PlanRequest } from './plan-socket.js';

/** A request line longer than this is not a plan request. */
const MAX_REQUEST_BYTES = 4096;

/**
 * Serves plan requests on the state's socket (plan-socket.ts), mode 0600. The daemon holds the state's
 * lock, so a socket file already there is a dead daemon's and is replaced. Null when the path is too
 * long to bind or the socket cannot be made: `kbsync plan` then reads the state itself.
 */
export async function startPlanServer(o: {
  localStatePath: string;
  answer: (req: PlanRequest) => Promise<PlanReply>;
  logger: Pick<Logger, 'warn' | 'info'>;
}): Promise<{ close(): Promise<void> } | null> {
  const path = planSocketPath(o.localStatePath);
  if (path.length > MAX_SOCKET_PATH) {
    o.logger.warn({ path }, 'the plan socket path is too long to bind: `kbsync plan` reads the state instead of asking this daemon');
    return null;
  }
  unlinkQuietly(path);
  // Closing waits for no asker: one that connected and said nothing must not hold the daemon's shutdown.
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    serve(socket, o.answer);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    chmodSync(path, 0o600);
  } catch (err) {
    o.logger.warn({ path, err: errorText(err) }, 'the plan socket could not be made: `kbsync plan` reads the state instead');
    server.close();
    return null;
  }
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
        unlinkQuietly(path);
      }),
  };
}

function serve(socket: Socket, answer: (req: PlanRequest) => Promise<PlanReply>): void {
  const chunks: Buffer[] = [];
  let size = 0;
  socket.on('error', () => socket.destroy());
  // At once: the asker tells a daemon that lives (and may take a while over its plan) from one stopped or hung.
  socket.write(helloLine());
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) return void socket.destroy();
    if (!chunk.includes(10)) return;
    socket.removeAllListeners('data');
    const line = Buffer.concat(chunks);
    void reply(line.toString('utf8', 0, line.indexOf(10)), answer).then((r) => socket.end(`${JSON.stringify(r)}\n`));
  });
}

async function reply(line: string, answer: (req: PlanRequest) => Promise<PlanReply>): Promise<PlanReply> {
  const refuse = (reason: string): PlanReply => ({ v: PLAN_PROTOCOL, ok: false, pid: process.pid, reason });
  let req: Partial<PlanRequest>;
  try {
    req = JSON.parse(line) as Partial<PlanRequest>;
  } catch {
    return refuse('not a JSON request');
  }
  if (req.v !== PLAN_PROTOCOL) return refuse(`protocol ${String(req.v)} asked, ${PLAN_PROTOCOL} spoken`);
  if (req.op !== 'plan') return refuse(`unknown request ${String(req.op)}`);
  try {
    return await answer({ v: PLAN_PROTOCOL, op: 'plan', json: req.json === true, all: req.all === true });
  } catch (err) {
    return refuse(errorText(err));
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // not there
  }
}
