import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { KBSYNC_BIN, REPO_ROOT, ensureDist } from '../../helpers/build-dist.js';

type Ended = { code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string };

/**
 * Runs the real `node bin/kbsync.js ...args` with one of its output pipes closed by the reader
 * before kbsync writes (what `kbsync --help | head -1` does when head exits first).
 */
function runWithClosedReader(args: string[], closed: 'stdout' | 'stderr'): Promise<Ended> {
  const child = spawn(process.execPath, [KBSYNC_BIN, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const open = closed === 'stdout' ? child.stderr : child.stdout;
  open.on('data', (chunk: Buffer) => {
    if (closed === 'stdout') stderr += chunk.toString();
    else stdout += chunk.toString();
  });
  child[closed].destroy();
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stderr, stdout }));
  });
}

beforeAll(async () => {
  await ensureDist();
}, 120_000);

describe('bin/kbsync.js when the reader of its output goes away (EPIPE)', () => {
  it('`kbsync --help` into a closed stdout ends quietly with exit 0', async () => {
    const ended = await runWithClosedReader(['--help'], 'stdout');

    expect(ended.stderr).toBe('');
    expect(ended).toMatchObject({ code: 0, signal: null });
  });

  it('`kbsync frobnicate` into a closed stderr keeps its usage exit code 2', async () => {
    const ended = await runWithClosedReader(['frobnicate'], 'stderr');

    expect(ended.stdout).toBe('');
    expect(ended).toMatchObject({ code: 2, signal: null });
  });
});
