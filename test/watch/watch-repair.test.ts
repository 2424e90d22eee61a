import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subscribe } from '@parcel/watcher';
import { afterEach, describe, expect, it } from 'vitest';
import { inotifyWatchedInodes, unwatchedFolders } from '../../src/watch/watch-repair.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tree(...paths: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'kbsync-repair-'));
  dirs.push(root);
  for (const p of paths) mkdirSync(join(root, p), { recursive: true });
  return root;
}
const ino = (path: string): bigint => lstatSync(path, { bigint: true }).ino;

describe('unwatchedFolders', () => {
  it('names the top-most folders without a watch, not what is below them, nor ignored folders, .git or links', () => {
    const root = tree('a/b/c', 'a/d', 'e', '.git/objects', 'skip/x');
    symlinkSync(join(root, 'e'), join(root, 'a/link'));
    const watched = new Set([root, join(root, 'a'), join(root, 'a/d')].map(ino));

    const found = unwatchedFolders([root], { watched, ignored: (p) => p === join(root, 'skip') });

    expect(found.sort()).toEqual([join(root, 'a/b'), join(root, 'e')]);
  });
});

describe('inotifyWatchedInodes', () => {
  it.runIf(process.platform === 'linux')(
    "reads this process's inotify watches: every folder of a tree @parcel/watcher subscribed to",
    async () => {
      const root = tree('a/b', 'c');
      const before = inotifyWatchedInodes();
      const sub = await subscribe(root, () => {});
      const during = inotifyWatchedInodes();
      await sub.unsubscribe();

      expect(before?.has(ino(join(root, 'a/b')))).toBe(false);
      for (const p of [root, join(root, 'a'), join(root, 'a/b'), join(root, 'c')]) expect(during?.has(ino(p))).toBe(true);
    },
  );
});
