import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist, KBSYNC_BIN, REPO_ROOT } from '../../helpers/build-dist.js';

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

  // The default folder is $XDG_CACHE_HOME/kbsync/node-compile-cache, or ~/.cache/kbsync/... without it.
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [KBSYNC_BIN, 'config', '--help'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: tmp, ...env },
    });

  it("a command writes the cache of the bundle it ran in the user's cache folder, not in the shared os.tmpdir()", () => {
    const shared = mkdtempSync(join(tmp, 'shared-tmp-'));
    const r = run({ TMPDIR: shared });
    expect(r.status).toBe(0);
    expect(filesUnder(join(tmp, '.cache', 'kbsync', 'node-compile-cache')).length).toBeGreaterThan(0);
    expect(readdirSync(shared)).toEqual([]);
  });

  it('XDG_CACHE_HOME, then NODE_COMPILE_CACHE, move it', () => {
    const xdg = mkdtempSync(join(tmp, 'xdg-'));
    expect(run({ XDG_CACHE_HOME: xdg }).status).toBe(0);
    expect(filesUnder(join(xdg, 'kbsync', 'node-compile-cache')).length).toBeGreaterThan(0);
    const named = mkdtempSync(join(tmp, 'named-'));
    expect(run({ XDG_CACHE_HOME: xdg, NODE_COMPILE_CACHE: named }).status).toBe(0);
    expect(filesUnder(named).length).toBeGreaterThan(0);
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 turns it off', () => {
    const off = mkdtempSync(join(tmp, 'off-'));
    const r = run({ TMPDIR: off, XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(r.status).toBe(0);
    expect(readdirSync(off)).toEqual([]);
  });
});
