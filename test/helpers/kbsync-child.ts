import { spawn, type ChildProcess } from 'node:child_process';
import { KBSYNC_BIN } from './build-dist.js';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { expect } from 'vitest';

/** How a child kbsync ended. */
export type ChildExit = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** A running `node bin/kbsync.js ...` (needs dist/: see ensureDist), and its end. */
export type KbsyncChild = {
  child: ChildProcess;
  exited: Promise<ChildExit>;
  /** stderr so far (a daemon's log while it runs). */ stderrSoFar(): string;
};

/**
 * Starts `node bin/kbsync.js ...args` in `cwd` as a real child process, with a minimal environment (plus
 * `extraEnv`). With `prefix`, that command runs it (e.g. `unshare ... sh -c '... exec "$0" "$@"'`): it must
 * exec node in the end, so that the child's pid is kbsync's.
 */
export function spawnKbsync(args: string[], cwd: string, extraEnv: Record<string, string> = {}, prefix: string[] = []): KbsyncChild {
  // A kbsync process makes a test e2e (or browser, which drives a real daemon): it belongs in an e2e/ folder
  // or test/browser/, those tiers (docs/development.md, "Tests").
  const testPath = expect.getState().testPath ?? '';
  if (!testPath.includes(`${sep}e2e${sep}`) && !testPath.includes(`${sep}test${sep}browser${sep}`))
    throw new Error(`${testPath} starts a kbsync process: move it to the e2e/ folder beside it (docs/development.md, "Tests")`);
  // HOME is the test's folder; the compile cache (by default under ~/.cache) is kept out of it, where a
  // user's would be, so that what a test finds in its folder is what kbsync wrote there.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: cwd,
    XDG_CACHE_HOME: join(tmpdir(), 'kbsync-test-cache'),
    ...extraEnv,
  };
  const command = [...prefix, process.execPath, KBSYNC_BIN, ...args];
  const child = spawn(command[0] as string, command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<ChildExit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exited, stderrSoFar: () => stderr };
}

/** SIGKILLs the child (no chance to record anything) and waits until it is gone. */
export async function killHard(k: KbsyncChild): Promise<ChildExit> {
  k.child.kill('SIGKILL');
  return k.exited;
}
