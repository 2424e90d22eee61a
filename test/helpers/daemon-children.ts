import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach } from 'vitest';
import { openState } from '../../src/sync/state/index.js';
import type { Workspace } from './e2e-workspace.js';
import { killHard, spawnKbsync, type KbsyncChild } from './kbsync-child.js';
import { until } from './until.js';

/**
 * Starts the daemon of a test's workspace, `kbsync watch -c <its config> ...args` in its root, and keeps
 * it in `children` (useChildren: killed if still running after its test). `untilDaemonReady` waits for
 * its first cycle; `startDaemon` returns at once, for a test that watches the start itself.
 */
export function startDaemon(
  children: KbsyncChild[],
  ws: Pick<Workspace, 'configPath' | 'root'>,
  args: string[] = [],
  env: Record<string, string> = {},
): KbsyncChild {
  const k = spawnKbsync(['watch', '-c', ws.configPath, ...args], ws.root, env);
  children.push(k);
  return k;
}

/** A JSON log line of a kbsync child. */
export type LogLine = Record<string, unknown> & { msg: string };

// The daemon suites take the one polling helper from here, beside their other daemon helpers.
export { until };

/**
 * The kbsync children (daemons) a test file starts: push each one here, and any still running after its
 * test is killed (SIGKILL), so that a failed test leaves no daemon holding a state or a port.
 */
export function useChildren(): KbsyncChild[] {
  const children: KbsyncChild[] = [];
  afterEach(async () => {
    for (const k of children.splice(0)) if (k.child.exitCode === null && k.child.signalCode === null) await killHard(k);
  });
  return children;
}

/** The JSON lines a child has written to stderr so far (its pino log). */
export function logsOf(k: KbsyncChild): LogLine[] {
  return k
    .stderrSoFar()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/** A loopback port free now (for a daemon's --http, whose URL must be known before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Waits until the daemon `k` has ended its first sync cycle: its status file (`statusPath`, beside its
 * state) says ready with its pid, and its `sync cycle done` line has reached this process. The status
 * file is written as the cycle ends, and can be read before the log line crosses the pipe.
 */
export async function untilDaemonReady(k: KbsyncChild, statusPath: string, timeoutMs = 30_000): Promise<void> {
  await until(
    'the daemon ready after its first sync',
    () => {
      if (!existsSync(statusPath)) return false;
      const s = JSON.parse(readFileSync(statusPath, 'utf8')) as { ready?: boolean; pid?: number };
      return s.ready === true && s.pid === k.child.pid && logsOf(k).some((l) => l.msg === 'sync cycle done');
    },
    timeoutMs,
  );
}

/** Waits until the copies the daemon sent are seen settled by its remote poll (SQLite state at `statePath`): their statuses move no more. */
export async function untilCopiesSettled(statePath: string): Promise<void> {
  await until('the copies sent processed', () => {
    const state = openState(statePath, { access: 'reader' });
    try {
      return !state.hasUnsettledRemote();
    } finally {
      state.close();
    }
  });
}
