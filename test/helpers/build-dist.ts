import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is test/helpers/build-dist.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The kbsync executable that runs the compiled dist/ (as users run it). */
export const KBSYNC_BIN = join(REPO_ROOT, 'bin', 'kbsync.js');

const LOCK_STALE_MS = 5 * 60_000;

/**
 * Makes sure dist/ is built from the current src/: when dist/bundle/main.js (what bin/kbsync.js
 * runs) is missing or any non-test source is newer than the newest compiled file, runs
 * `tsc -p tsconfig.build.json` and scripts/bundle.js once (a lock folder keeps parallel test files
 * from building at the same time). tsc emits even when another engineer's file has a type error;
 * only a missing output is a failure here.
 */
export async function ensureDist(): Promise<void> {
  if (isFresh()) return;
  const lock = join(REPO_ROOT, 'node_modules', '.cache', 'kbsync-e2e-dist.lock');
  mkdirSync(join(lock, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock left by a killed test run is taken over after a while.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    if (isFresh()) return;
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const output = await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        [tsc, '-p', 'tsconfig.build.json'],
        { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 },
        (_err, stdout, stderr) => resolve(`${stdout}${stderr}`),
      );
    });
    if (!existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js')))
      throw new Error(`tsc -p tsconfig.build.json did not produce dist/cli/main.js:\n${output}`);
    const bundled = await new Promise<string>((resolve) => {
      execFile(process.execPath, ['scripts/bundle.js'], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 }, (_err, stdout, stderr) =>
        resolve(`${stdout}${stderr}`),
      );
    });
    if (!existsSync(BUNDLE_MAIN)) throw new Error(`scripts/bundle.js did not produce dist/bundle/main.js:\n${bundled}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** vitest `globalSetup` entry: add 'test/helpers/build-dist.ts' to test.globalSetup to build once per run. */
export async function setup(): Promise<void> {
  await ensureDist();
}

/** What bin/kbsync.js runs. */
const BUNDLE_MAIN = join(REPO_ROOT, 'dist', 'bundle', 'main.js');

function isFresh(): boolean {
  if (!existsSync(BUNDLE_MAIN)) return false;
  // The bundle also carries package.json's version and whatever scripts/bundle.js puts in it.
  const inputs = [join(REPO_ROOT, 'package.json'), join(REPO_ROOT, 'scripts', 'bundle.js')].map((file) => statSync(file).mtimeMs);
  const src = Math.max(
    newestMtime(join(REPO_ROOT, 'src'), (name) => name.endsWith('.ts') && !name.endsWith('.test.ts')),
    ...inputs,
  );
  // The bundle is written after tsc's files: it must be newer than every source too.
  return statSync(BUNDLE_MAIN).mtimeMs >= src && newestMtime(join(REPO_ROOT, 'dist'), (name) => name.endsWith('.js')) >= src;
}

/** The newest modification time (ms) of the files under `dir` whose name passes `keep`. */
function newestMtime(dir: string, keep: (name: string) => boolean): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path, keep));
    else if (entry.isFile() && keep(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}
