import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPlanServer } from '../../src/watch/plan-server.js';
import { askDaemonPlan, PLAN_PROTOCOL, planSocketPath, type PlanReply } from '../../src/watch/plan-socket.js';

const quiet = { warn: () => {}, info: () => {} };
const T = { helloMs: 2000, replyMs: 2000 };
const OK: PlanReply = {
  v: PLAN_PROTOCOL,
  ok: true,
  pid: 1,
  totals: { failed: 0, deferred: 0 },
  notes: [],
  out: 'nothing to sync\n',
  from: 'memory',
  tookMs: 0,
};

/** A raw exchange: `line` sent, the first line back after the daemon's hello. */
function exchange(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = createConnection(path, () => socket.write(`${line}\n`));
    socket.on('data', (chunk: Buffer) => (got += chunk.toString()));
    socket.on('end', () => resolve(got.split('\n')[1] as string));
    socket.on('error', reject);
  });
}

describe('the plan socket between kbsync plan and a running kbsync watch', () => {
  let dir: string;
  let state: string;
  let servers: { close(): Promise<void> }[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kbsync-sock-'));
    state = join(dir, 'state.db');
    servers = [];
  });
  afterEach(async () => {
    for (const s of servers) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers a request of its protocol (socket 0600, beside the state), and refuses another version's with the reason", async () => {
    const asked: unknown[] = [];
    const server = await startPlanServer({ localStatePath: state, answer: async (req) => (asked.push(req), OK), logger: quiet });
    servers.push(server as NonNullable<typeof server>);

    expect(statSync(planSocketPath(state)).mode & 0o777).toBe(0o600);
    expect(await askDaemonPlan(state, { json: true, all: false }, T)).toEqual(OK);
    expect(asked).toEqual([{ v: PLAN_PROTOCOL, op: 'plan', json: true, all: false }]);
    const refused = JSON.parse(await exchange(planSocketPath(state), JSON.stringify({ v: PLAN_PROTOCOL + 1, op: 'plan' }))) as PlanReply;
    expect(refused).toMatchObject({ ok: false, reason: `protocol ${PLAN_PROTOCOL + 1} asked, ${PLAN_PROTOCOL} spoken` });
    expect(asked).toHaveLength(1);
  });

  it('an older daemon (another protocol in its answer), none or a stale socket file: null, the state is read instead', async () => {
    expect(await askDaemonPlan(state, { json: false, all: false }, { helloMs: 500, replyMs: 500 })).toBeNull();
    writeFileSync(planSocketPath(state), '');
    expect(await askDaemonPlan(state, { json: false, all: false }, { helloMs: 500, replyMs: 500 })).toBeNull();
    rmSync(planSocketPath(state));

    const older: Server = createServer((s) => s.on('error', () => {}).end(`${JSON.stringify({ ...OK, v: PLAN_PROTOCOL - 1 })}\n`));
    await new Promise<void>((resolve) => older.listen(planSocketPath(state), resolve));
    expect(await askDaemonPlan(state, { json: false, all: false }, T)).toBeNull();
    older.close();
    rmSync(planSocketPath(state), { force: true });
  });

  it('a daemon that does not greet (stopped, hung) is given up on after helloMs; one that greets, after replyMs more, with its pid', async () => {
    const silent: Server = createServer((s) => s.on('error', () => {}).resume());
    await new Promise<void>((resolve) => silent.listen(planSocketPath(state), resolve));
    const started = Date.now();
    expect(await askDaemonPlan(state, { json: false, all: false }, { helloMs: 300, replyMs: 60_000 })).toMatchObject({
      silent: 'hello',
      pid: null,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await new Promise<void>((resolve) => silent.close(() => resolve()));

    const greeter: Server = createServer((s) =>
      s.on('error', () => {}).write(`${JSON.stringify({ v: PLAN_PROTOCOL, hello: true, pid: 4242 })}\n`),
    );
    await new Promise<void>((resolve) => greeter.listen(planSocketPath(state), resolve));
    expect(await askDaemonPlan(state, { json: false, all: false }, { helloMs: 60_000, replyMs: 300 })).toMatchObject({
      silent: 'reply',
      pid: 4242,
    });
    greeter.close();
  });

  it('a daemon greets each asker before it has read the request (its plan may take a while)', async () => {
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = await startPlanServer({ localStatePath: state, answer: async () => (await held, OK), logger: quiet });
    servers.push(server as NonNullable<typeof server>);
    const first = await new Promise<string>((resolve, reject) => {
      const socket = createConnection(planSocketPath(state));
      socket.on('data', (chunk: Buffer) => {
        resolve(chunk.toString().split('\n')[0] as string);
        socket.destroy();
      });
      socket.on('error', reject);
    });
    expect(JSON.parse(first)).toEqual({ v: PLAN_PROTOCOL, hello: true, pid: process.pid });
    const asked = askDaemonPlan(state, { json: false, all: false }, T);
    release();
    expect(await asked).toEqual(OK);
  });

  it('closing waits for no asker that connected and said nothing (the daemon shuts down on time)', async () => {
    const server = await startPlanServer({ localStatePath: state, answer: async () => OK, logger: quiet });
    const idle = createConnection(planSocketPath(state));
    idle.on('error', () => {}).resume();
    await new Promise<void>((resolve) => idle.once('connect', () => resolve()));

    await (server as NonNullable<typeof server>).close();

    await new Promise<void>((resolve) => (idle.destroyed ? resolve() : idle.once('close', () => resolve())));
  });

  it('a socket file a dead daemon left is replaced', async () => {
    writeFileSync(planSocketPath(state), 'left behind');
    const server = await startPlanServer({ localStatePath: state, answer: async () => OK, logger: quiet });
    servers.push(server as NonNullable<typeof server>);

    expect(await askDaemonPlan(state, { json: false, all: false }, T)).toEqual(OK);
  });
});
