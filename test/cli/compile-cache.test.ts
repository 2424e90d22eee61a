import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist, KBSYNC_BIN, REPO_ROOT } from '../helpers/build-dist.js';

/** Every file under `dir`, recursively (the compile cache keeps one folder per Node version). */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));

describe("the CLI keeps V8's compiled code on disk (Node's compile cache)", () => {
  let tmp: string;
  beforeAll(async () => {
    await ensureDist();
    tmp = mkdtempSync(join(tmpdir(), 'kbsync-compile-cache-'));
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  // The default folder is os.tmpdir()/node-compile-cache: TMPDIR moves it into this test's folder.
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [KBSYNC_BIN, 'config', '--help'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: tmp, ...env },
    });

  it('a command writes the cache of the bundle it ran, in os.tmpdir()/node-compile-cache', () => {
    const r = run({ TMPDIR: tmp });
    expect(r.status).toBe(0);
    const cached = filesUnder(join(tmp, 'node-compile-cache'));
    expect(cached.length).toBeGreaterThan(0);
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 turns it off', () => {
    const off = mkdtempSync(join(tmp, 'off-'));
    const r = run({ TMPDIR: off, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(r.status).toBe(0);
    expect(readdirSync(off)).toEqual([]);
  });
});
