import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { main } from '../../src/cli/main.js';
import { silentLogger } from '../../src/shared/logger.js';

export type CliRun = { code: number; stdout: string; stderr: string };

/** Runs `kbsync ...args` in-process with captured output, in `cwd`, with only the given env. */
export async function runCli(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(['node', 'kbsync', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: options.env ?? {},
    cwd: options.cwd,
    getLogger: () => Promise.resolve(silentLogger()),
  });
  return { code, stdout, stderr };
}

/** A fresh temp folder, removed after the current test. */
export function useTempDirs(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-cli-'));
    dirs.push(dir);
    return dir;
  };
}
