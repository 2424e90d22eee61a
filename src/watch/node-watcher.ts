import { lstatSync, readdirSync, watch as fsWatch, type FSWatcher } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { createChokidarWatcher } from './chokidar-watcher.js';
import type { CreateWatcher, FolderWatcher, WatcherHandlers, WatcherSpec } from './watcher.js';

/** Node's fs.watch of one folder, non-recursive (injected by tests: a watch that throws ENOSPC). */
export type WatchFolder = (dir: string, listener: (kind: string, name: string | null) => void) => FSWatcher;

const watchFolder: WatchFolder = (dir, listener) =>
  fsWatch(dir, { persistent: true, recursive: false, encoding: 'utf8' }, (kind, name) => listener(kind, name));

/**
 * The `node` backend: Node's own fs.watch on each folder of the tree, not on files. On Linux libuv holds
 * one inotify descriptor for the process on its event loop and wakes only when an event arrives (no
 * thread, no timer), so an idle daemon does not wake for it at all. A folder that appears is watched
 * before it is listed, so a folder made inside it meanwhile (`mkdir -p`, `cp -r`, a checkout) is either
 * listed or seen by its own event; a folder that goes away (deleted, moved out or renamed) has its
 * watches, and those of the folders below, closed. Like every backend it only gives hints: the walk
 * decides what changed.
 */
export const createNodeWatcher: CreateWatcher = (spec, handlers) => createNodeWatcherWith(watchFolder)(spec, handlers);

/** createNodeWatcher with another fs.watch (tests). */
export function createNodeWatcherWith(watchOne: WatchFolder): CreateWatcher {
  return async (spec, handlers) => {
    if (spec.backend === 'polling') return createChokidarWatcher(spec, handlers);
    const tree = new WatchedTree(spec, handlers, watchOne);
    // The root's own failure (ENOSPC, EACCES, gone) is the caller's: it falls back to polling.
    tree.add(spec.root, true);
    const result: FolderWatcher = {
      backend: 'events',
      close: () => {
        tree.closeAll();
        return Promise.resolve();
      },
    };
    return Promise.resolve(result);
  };
}

type Watched = { watcher: FSWatcher; ino: bigint };

/** The folders of one source's tree and their watchers, by absolute path. */
class WatchedTree {
  private readonly folders = new Map<string, Watched>();
  private readonly skipNames: ReadonlySet<string>;
  private closed = false;
  /** Set once ENOSPC was reported: the caller replaces this watcher, so no further watch is tried. */
  private full = false;

  constructor(
    private readonly spec: WatcherSpec,
    private readonly handlers: WatcherHandlers,
    private readonly watchOne: WatchFolder,
  ) {
    this.skipNames = new Set(spec.ignoredNames ?? []);
  }

  /** How many folders are watched (tests). */
  get size(): number {
    return this.folders.size;
  }

  /**
   * Watches `dir` and every folder below it not yet watched: each folder watched first, then listed.
   * A folder gone or unreadable meanwhile is skipped (the walk covers it). With `root` (the start), a
   * failure of `dir` itself or ENOSPC anywhere closes every watch and is thrown; later, ENOSPC ends the
   * adding and goes to onError (the daemon falls back to polling).
   */
  add(dir: string, root = false): void {
    const stack = [dir];
    while (stack.length > 0 && !this.closed && !this.full) {
      const current = stack.pop() as string;
      if (!this.folders.has(current)) {
        try {
          this.watchAt(current);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (root && (current === dir || code === 'ENOSPC')) {
            this.closeAll();
            throw err;
          }
          if (code === 'ENOSPC') {
            this.full = true;
            this.handlers.onError(err);
          }
          continue;
        }
      }
      let entries;
      try {
        entries = readdirSync(current, { withFileTypes: true });
      } catch {
        continue; // gone or unreadable since its watch: its own event says so
      }
      for (const e of entries) {
        if (!e.isDirectory() || this.skipNames.has(e.name)) continue;
        const path = join(current, e.name);
        if (!this.folders.has(path) && !this.spec.ignored(path)) stack.push(path);
      }
    }
  }

  private watchAt(dir: string): void {
    const ino = lstatSync(dir, { bigint: true }).ino;
    const watcher = this.watchOne(dir, (kind, name) => this.onEvent(dir, kind, name));
    watcher.on('error', (err) => this.onWatcherError(dir, err));
    this.folders.set(dir, { watcher, ino });
  }

  private onEvent(dir: string, kind: string, name: string | null): void {
    if (this.closed || this.folders.get(dir) === undefined) return;
    if (name === null || name === '') {
      this.handlers.onEvent(dir, kind);
      return;
    }
    const path = join(dir, name);
    if (kind === 'change') {
      if (!this.spec.ignored(path)) this.handlers.onEvent(path, 'change');
      return;
    }
    // A rename: a create, a delete or either end of a move, of `path` or (inotify's event of the
    // watched folder itself, named by the folder's own name) of `dir`.
    const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    if (st === undefined && name === basename(dir) && this.gone(dir)) {
      this.drop(dir);
      if (!this.spec.ignored(dir)) this.handlers.onEvent(dir, 'unlinkDir');
      return;
    }
    const known = this.folders.get(path);
    if (known !== undefined && (st === undefined || !st.isDirectory() || st.ino !== known.ino)) this.drop(path);
    if (this.spec.ignored(path)) return;
    if (st?.isDirectory() === true) {
      if (!this.skipNames.has(name)) this.add(path);
      this.handlers.onEvent(path, 'addDir');
      return;
    }
    this.handlers.onEvent(path, st === undefined ? 'unlink' : 'add');
  }

  /** Whether the watched folder `dir` is no longer the folder its watch was made on. */
  private gone(dir: string): boolean {
    const st = lstatSync(dir, { bigint: true, throwIfNoEntry: false });
    return st === undefined || !st.isDirectory() || st.ino !== this.folders.get(dir)?.ino;
  }

  /** Closes the watches of `dir` and of every folder below it. */
  private drop(dir: string): void {
    const below = dir + sep;
    for (const [path, w] of this.folders) {
      if (path !== dir && !path.startsWith(below)) continue;
      this.folders.delete(path);
      w.watcher.close();
    }
  }

  private onWatcherError(dir: string, err: unknown): void {
    if (this.closed) return;
    // A folder that went away is not an error of the watch: its parent's event reports it.
    if (this.gone(dir)) {
      this.drop(dir);
      return;
    }
    this.handlers.onError(err);
  }

  closeAll(): void {
    this.closed = true;
    for (const w of this.folders.values()) w.watcher.close();
    this.folders.clear();
  }
}
