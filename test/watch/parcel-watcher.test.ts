import { mkdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inotifyWatches } from '../../bench/watch.js';
import { useWatchRoot, watchTree } from '../helpers/watch-root.js';
import { createChokidarWatcher } from '../../src/watch/chokidar-watcher.js';
import { createParcelWatcher } from '../../src/watch/parcel-watcher.js';
import type { CreateWatcher, FolderWatcher } from '../../src/watch/watcher.js';

const temp = useWatchRoot('kbsync-parcel-');
const open = temp.open;

/** The shared tree (test/helpers/watch-root.ts). */
function tree(): { folders: number; files: number } {
  return watchTree(temp.root);
}

async function start(create: CreateWatcher, seen: (path: string) => void): Promise<FolderWatcher> {
  const w = await create(
    {
      root: temp.root,
      backend: 'events',
      ignored: (p) => p.includes('/node_modules'),
      ignoredNames: ['.git', 'node_modules'],
      pollIntervalMs: 1000,
    },
    {
      onEvent: (path) => seen(path),
      onError: (err) => {
        throw err;
      },
    },
  );
  open.push(w);
  return w;
}

/** Resolves when an event for `path` has arrived. */
function eventFor(waiters: Map<string, () => void>, path: string): Promise<void> {
  return new Promise((resolve) => waiters.set(path, resolve));
}

describe('the @parcel/watcher backend', () => {
  it('holds one inotify watch per folder (node_modules skipped), where chokidar holds one per file', async () => {
    const { folders, files } = tree();
    const before = inotifyWatches();
    const parcel = await start(createParcelWatcher, () => {});
    const withParcel = inotifyWatches();
    await parcel.close();
    open.length = 0;
    const chokidar = await start(createChokidarWatcher, () => {});
    const withChokidar = inotifyWatches();
    await chokidar.close();
    open.length = 0;

    expect(before).not.toBeNull();
    expect((withParcel as number) - (before as number)).toBe(folders);
    expect((withChokidar as number) - (before as number)).toBeGreaterThanOrEqual(files);
  });

  it('reports a create (also inside a folder made just before), a modify, a rename and a delete', async () => {
    tree();
    const waiters = new Map<string, () => void>();
    const w = await start(createParcelWatcher, (path) => waiters.get(path)?.());
    const doc = join(temp.root, 'area-1', 'part-1', 'doc-3.md');
    const nested = join(temp.root, 'fresh', 'deeper', 'new.md');
    const renamed = join(temp.root, 'area-2', 'renamed.md');

    const modified = eventFor(waiters, doc);
    writeFileSync(doc, 'changed\n');
    await modified;
    const created = eventFor(waiters, join(temp.root, 'fresh'));
    mkdirSync(join(temp.root, 'fresh', 'deeper'), { recursive: true });
    writeFileSync(nested, 'new\n');
    await created;
    const moved = eventFor(waiters, renamed);
    renameSync(join(temp.root, 'area-2', 'part-2', 'doc-0.md'), renamed);
    await moved;
    const deleted = eventFor(waiters, doc);
    unlinkSync(doc);
    await deleted;

    expect(w.backend).toBe('events');
  });

  it("hands backend: polling to chokidar's polling", async () => {
    const w = await createParcelWatcher(
      { root: temp.root, backend: 'polling', ignored: () => false, pollIntervalMs: 100 },
      { onEvent: () => {}, onError: () => {} },
    );
    open.push(w);
    expect(w.backend).toBe('polling');
  });
});
