import { cpSync, mkdirSync, renameSync, rmSync, unlinkSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inotifyWatches } from '../../bench/watch.js';
import { useWatchRoot, watchTree } from '../helpers/watch-root.js';
import { createNodeWatcher, createNodeWatcherWith, type WatchFolder } from '../../src/watch/node-watcher.js';
import type { CreateWatcher, FolderWatcher } from '../../src/watch/watcher.js';

const temp = useWatchRoot('kbsync-nodew-');
const open = temp.open;

/** The shared tree (test/helpers/watch-root.ts), with a .git folder and a state folder that are never watched. */
function tree(): { folders: number; files: number } {
  return watchTree(temp.root, ['.git/objects', 'state']);
}

type Seen = { paths: string[]; errors: unknown[]; waiters: Map<string, () => void> };

async function start(create: CreateWatcher = createNodeWatcher): Promise<{ w: FolderWatcher; seen: Seen }> {
  const seen: Seen = { paths: [], errors: [], waiters: new Map() };
  const w = await create(
    {
      root: temp.root,
      backend: 'events',
      ignored: (p) =>
        p.includes('/node_modules') || p.includes('/.git') || p.startsWith(join(temp.root, 'state')) || p.endsWith('.state-db'),
      ignoredNames: ['.git', 'node_modules'],
      pollIntervalMs: 1000,
    },
    {
      onEvent: (path) => {
        seen.paths.push(path);
        seen.waiters.get(path)?.();
      },
      onError: (err) => seen.errors.push(err),
    },
  );
  open.push(w);
  return { w, seen };
}

/** Resolves when an event for `path` has arrived; rejects after 5 s. */
function eventFor(seen: Seen, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no event for ${path}`)), 5000);
    seen.waiters.set(path, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const watchesNow = (): number => inotifyWatches() as number;

describe('the node (fs.watch) backend', () => {
  it('holds one inotify watch per folder, none for node_modules, .git or ignored folders', async () => {
    const { folders } = tree();
    const before = watchesNow();
    const { w } = await start();
    expect(watchesNow() - before).toBe(folders);
    await w.close();
    expect(watchesNow()).toBe(before);
  });

  it('reports a create, a modify, a rename and a delete with their paths; not ignored paths', async () => {
    tree();
    const { seen } = await start();
    const doc = join(temp.root, 'area-1', 'part-1', 'doc-3.md');
    const renamed = join(temp.root, 'area-2', 'renamed.md');
    const created = join(temp.root, 'area-3', 'part-3', 'new.md');

    let wait = eventFor(seen, doc);
    writeFileSync(doc, 'changed\n');
    await wait;
    wait = eventFor(seen, created);
    writeFileSync(created, 'new\n');
    await wait;
    const from = join(temp.root, 'area-2', 'part-2', 'doc-0.md');
    const both = Promise.all([eventFor(seen, renamed)]);
    renameSync(from, renamed);
    await both;
    expect(seen.paths).toContain(from);
    wait = eventFor(seen, doc);
    unlinkSync(doc);
    await wait;
    // Writes under ignored paths arrive as no event: a later one proves the earlier had its chance.
    writeFileSync(join(temp.root, 'node_modules', 'pkg-1', 'x.js'), '1\n');
    writeFileSync(join(temp.root, 'state', 'x.db'), '1\n');
    writeFileSync(join(temp.root, '.git', 'HEAD'), '1\n');
    // An ignored file in a watched folder (the state file beside the documents): created, then changed.
    writeFileSync(join(temp.root, 'area-1', 'x.state-db'), '1\n');
    writeFileSync(join(temp.root, 'area-1', 'x.state-db'), '2\n');
    wait = eventFor(seen, join(temp.root, 'last.md'));
    writeFileSync(join(temp.root, 'last.md'), '1\n');
    await wait;
    expect(
      seen.paths.filter((p) => p.includes('node_modules') || p.includes('/state') || p.includes('state-db') || p.includes('.git')),
    ).toEqual([]);
    expect(seen.errors).toEqual([]);
  });

  it('watches folders made inside new folders (mkdir -p, cp -r): a later edit deep inside is reported', async () => {
    tree();
    const { seen } = await start();
    const before = watchesNow();
    const deep = join(temp.root, 'fresh', 'a', 'b', 'c');
    let wait = eventFor(seen, join(temp.root, 'fresh'));
    mkdirSync(deep, { recursive: true });
    await wait;
    // cp -r: a whole tree arrives at once, its inner folders made before any watch of theirs.
    wait = eventFor(seen, join(temp.root, 'copy'));
    cpSync(join(temp.root, 'area-0'), join(temp.root, 'copy'), { recursive: true });
    await wait;
    // area-0 holds part-0, part-4, part-8, part-12, part-16.
    expect(watchesNow() - before).toBe(4 + 6);
    const inner = join(deep, 'late.md');
    wait = eventFor(seen, inner);
    writeFileSync(inner, 'late\n');
    await wait;
    const copied = join(temp.root, 'copy', 'part-4', 'doc-1.md');
    wait = eventFor(seen, copied);
    writeFileSync(copied, 'edited\n');
    await wait;
  });

  it('closes the watches of a removed folder and of the folders below it, and follows a renamed one', async () => {
    tree();
    const { seen } = await start();
    const before = watchesNow();
    let wait = eventFor(seen, join(temp.root, 'area-1'));
    rmSync(join(temp.root, 'area-1'), { recursive: true });
    await wait;
    // area-1 and its 5 parts.
    expect(watchesNow()).toBe(before - 6);
    wait = eventFor(seen, join(temp.root, 'moved'));
    renameSync(join(temp.root, 'area-2'), join(temp.root, 'moved'));
    await wait;
    // The same folders under the new name: the old paths' watches closed, the new ones made.
    expect(watchesNow()).toBe(before - 6);
    const doc = join(temp.root, 'moved', 'part-2', 'doc-5.md');
    wait = eventFor(seen, doc);
    writeFileSync(doc, 'edit\n');
    await wait;
    expect(seen.paths.filter((p) => p.startsWith(join(temp.root, 'area-2') + '/'))).toEqual([]);
    // A folder removed and made again under the same name is watched again.
    rmSync(join(temp.root, 'moved', 'part-2'), { recursive: true });
    mkdirSync(join(temp.root, 'moved', 'part-2'));
    const again = join(temp.root, 'moved', 'part-2', 'again.md');
    await new Promise((r) => setTimeout(r, 100));
    wait = eventFor(seen, again);
    writeFileSync(again, 'again\n');
    await wait;
  });

  it('out of inotify watches (ENOSPC): the folders past the limit are polled one by one, the others keep their watch', async () => {
    const { folders } = tree();
    let allowed = 3;
    const limited: WatchFolder = (dir, listener) => {
      if (allowed <= 0)
        throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${dir}'`), { code: 'ENOSPC' });
      allowed--;
      return watch(dir, { persistent: true }, (kind, name) => listener(kind, name));
    };
    const reports: { polled: number; watched: number }[] = [];
    const seen: Seen = { paths: [], errors: [], waiters: new Map() };
    const w = await createNodeWatcherWith(limited)(
      {
        root: temp.root,
        backend: 'events',
        ignored: (p) => p.includes('/node_modules') || p.includes('/.git') || p.startsWith(join(temp.root, 'state')),
        ignoredNames: ['.git', 'node_modules'],
        pollIntervalMs: 100,
      },
      {
        onEvent: (path) => {
          seen.paths.push(path);
          seen.waiters.get(path)?.();
        },
        onError: (err) => seen.errors.push(err),
        onPolled: (f) => reports.push(f),
      },
    );
    open.push(w);
    expect(w.backend).toBe('events');
    expect(reports.at(-1)).toEqual({ polled: folders - 3, watched: 3 });
    expect(w.polls?.(temp.root)).toBe(false);
    const polledDir = join(temp.root, 'area-3', 'part-19');
    expect(w.polls?.(polledDir)).toBe(true);

    // An edit, a new file and a deletion in a polled folder: each seen by the sweep.
    let wait = eventFor(seen, join(polledDir, 'doc-0.md'));
    writeFileSync(join(polledDir, 'doc-0.md'), 'edited, longer than before\n');
    await wait;
    wait = eventFor(seen, join(polledDir, 'new.md'));
    writeFileSync(join(polledDir, 'new.md'), 'new\n');
    await wait;
    wait = eventFor(seen, join(polledDir, 'doc-1.md'));
    unlinkSync(join(polledDir, 'doc-1.md'));
    await wait;
    // A folder made inside a polled folder is polled too, and its files seen.
    const deeper = join(polledDir, 'deeper');
    wait = eventFor(seen, deeper);
    mkdirSync(deeper);
    await wait;
    expect(w.polls?.(deeper)).toBe(true);
    wait = eventFor(seen, join(deeper, 'x.md'));
    writeFileSync(join(deeper, 'x.md'), 'x\n');
    await wait;
    expect(seen.errors).toEqual([]);

    // Room again (the limit raised): the next sweep watches the polled folders by events.
    allowed = 1000;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => reports.at(-1)?.polled === 0 && (clearInterval(timer), resolve()), 20);
    });
    expect(reports.at(-1)).toEqual({ polled: 0, watched: folders + 1 });
    expect(w.polls?.(polledDir)).toBe(false);
    wait = eventFor(seen, join(deeper, 'y.md'));
    writeFileSync(join(deeper, 'y.md'), 'y\n');
    await wait;
  });

  it("hands backend: polling to chokidar's polling", async () => {
    const w = await createNodeWatcher(
      { root: temp.root, backend: 'polling', ignored: () => false, pollIntervalMs: 100 },
      { onEvent: () => {}, onError: () => {} },
    );
    open.push(w);
    expect(w.backend).toBe('polling');
  });
});
