import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { FolderWatcher } from '../../src/watch/watcher.js';

/**
 * A new temp folder for each test of a watcher backend (`root`, set before each test), removed after
 * it with every watcher the test pushed to `open` closed first.
 */
export function useWatchRoot(prefix: string): { root: string; open: FolderWatcher[] } {
  const temp = { root: '', open: [] as FolderWatcher[] };
  beforeEach(() => {
    temp.root = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    for (const w of temp.open.splice(0)) await w.close();
    rmSync(temp.root, { recursive: true, force: true });
  });
  return temp;
}

/**
 * 20 folders of 25 files under `root` (4 areas of 5 parts), and a node_modules tree of 5 folders that
 * no backend watches; `extra` adds folders of its own (a .git, a state folder). Returns what a backend
 * watches: the root, 4 areas and 20 parts, and the 500 files.
 */
export function watchTree(root: string, extra: readonly string[] = []): { folders: number; files: number } {
  for (let d = 0; d < 20; d++) {
    mkdirSync(join(root, `area-${d % 4}`, `part-${d}`), { recursive: true });
    for (let f = 0; f < 25; f++) writeFileSync(join(root, `area-${d % 4}`, `part-${d}`, `doc-${f}.md`), `${d}/${f}\n`);
  }
  for (let d = 0; d < 5; d++) mkdirSync(join(root, 'node_modules', `pkg-${d}`), { recursive: true });
  for (const folder of extra) mkdirSync(join(root, folder), { recursive: true });
  return { folders: 25, files: 500 };
}
