import { lstatSync, readdirSync, watch as fsWatch, type FSWatcher, type Stats } from 'node:fs';
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
 *
 * Out of inotify watches (ENOSPC), the folders past the limit are polled, each on its own: its direct
 * entries are stat'ed by one shared sweep (see PolledFolders), while the folders that got a watch keep
 * it. Each sweep first tries to watch a polled folder again, so raising the limit brings them back to
 * events without a restart.
 */
export const createNodeWatcher: CreateWatcher = (spec, handlers) => createNodeWatcherWith(watchFolder)(spec, handlers);

/** createNodeWatcher with another fs.watch (tests). */
export function createNodeWatcherWith(watchOne: WatchFolder): CreateWatcher {
  return async (spec, handlers) => {
    if (spec.backend === 'polling') return createChokidarWatcher(spec, handlers);
    const tree = new WatchedTree(spec, handlers, watchOne);
    // The root's own failure (EACCES, gone; not ENOSPC, which polls it) is the caller's.
    tree.add(spec.root, true);
    const result: FolderWatcher = {
      backend: 'events',
      polls: (dir) => tree.polls(dir),
      close: () => {
        tree.closeAll();
        return Promise.resolve();
      },
    };
    return Promise.resolve(result);
  };
}

type Watched = { watcher: FSWatcher; ino: bigint };

/** A folder polled instead of watched: its inode, and a signature of each direct entry as last stat'ed. */
type Polled = { ino: bigint; entries: Map<string, string> };

/** Past this much work in one go, a sweep yields to the event loop. */
const SWEEP_SLICE_MS = 20;
/** A sweep waits this many times its own duration before the next, so that polling takes a bounded share of a core. */
const SWEEP_IDLE_FACTOR = 4;

/** The folders of one source's tree and their watchers, by absolute path. */
class WatchedTree {
  private readonly folders = new Map<string, Watched>();
  /** The folders past the inotify limit, stat-polled by the sweep. */
  private readonly polled = new Map<string, Polled>();
  private readonly skipNames: ReadonlySet<string>;
  private closed = false;
  /** Set on ENOSPC: new folders are polled without trying a watch, until a sweep's retry gets one. */
  private full = false;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping = false;
  private reported = { polled: 0, watched: 0 };

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

  /** Whether `dir` is polled, not watched (the daemon's watch repair leaves it alone). */
  polls(dir: string): boolean {
    return this.polled.has(dir);
  }

  /**
   * Watches `dir` and every folder below it not yet watched: each folder watched first, then listed.
   * Out of inotify watches (ENOSPC), a folder is polled instead. A folder gone or unreadable meanwhile
   * is skipped (the walk covers it). With `root` (the start), a failure of `dir` itself other than
   * ENOSPC closes every watch and is thrown.
   */
  add(dir: string, root = false): void {
    const stack = [dir];
    while (stack.length > 0 && !this.closed) {
      const current = stack.pop() as string;
      if (!this.folders.has(current) && !this.polled.has(current)) {
        const outcome = this.full ? 'full' : this.tryWatch(current);
        if (outcome === 'full') {
          if (!this.pollAt(current)) continue;
        } else if (outcome !== 'watched') {
          if (root && current === dir) {
            this.closeAll();
            throw outcome;
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
        if (!this.folders.has(path) && !this.polled.has(path) && !this.spec.ignored(path)) stack.push(path);
      }
    }
    this.report();
  }

  /** Watches `dir` by inotify: 'watched', 'full' (ENOSPC), or the error (gone, unreadable...). */
  private tryWatch(dir: string): 'watched' | 'full' | Error {
    try {
      this.watchAt(dir);
      return 'watched';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') return err instanceof Error ? err : new Error(String(err));
      this.full = true;
      return 'full';
    }
  }

  /** Starts polling `dir` (its entries now are the baseline); false if it is gone or unreadable. */
  private pollAt(dir: string): boolean {
    let ino: bigint;
    let entries: Map<string, string>;
    try {
      ino = lstatSync(dir, { bigint: true }).ino;
      entries = this.listPolled(dir);
    } catch {
      return false;
    }
    this.polled.set(dir, { ino, entries });
    this.scheduleSweep();
    return true;
  }

  /** The signature of each direct entry of `dir` (a folder's by its inode only: its mtime moves with its entries). */
  private listPolled(dir: string): Map<string, string> {
    const entries = new Map<string, string>();
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (this.spec.ignored(path)) continue;
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (st !== undefined) entries.set(name, signature(st));
    }
    return entries;
  }

  private scheduleSweep(wait = this.spec.pollIntervalMs): void {
    if (this.closed || this.sweepTimer !== null || this.sweeping || this.polled.size === 0) return;
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = null;
      void this.sweep();
    }, wait);
  }

  /**
   * One pass over the polled folders: first a watch is tried again for them (freed or raised watches
   * bring folders back to events), then each is compared with its last listing, in slices that yield to
   * the event loop. The next pass waits pollIntervalMs, or SWEEP_IDLE_FACTOR times this one's duration.
   */
  private async sweep(): Promise<void> {
    this.sweeping = true;
    const started = performance.now();
    try {
      this.full = false;
      for (const dir of [...this.polled.keys()]) {
        if (this.closed) return;
        const outcome = this.tryWatch(dir);
        if (outcome === 'full') break;
        if (outcome !== 'watched') continue; // gone or unreadable: its comparison below says so
        // Watched now: one last comparison covers what changed since the previous pass.
        this.compare(dir);
        this.polled.delete(dir);
      }
      let slice = performance.now();
      for (const dir of [...this.polled.keys()]) {
        if (this.closed) return;
        if (this.polled.has(dir)) this.compare(dir);
        if (performance.now() - slice > SWEEP_SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
      }
      this.report();
    } finally {
      this.sweeping = false;
    }
    this.scheduleSweep(Math.max(this.spec.pollIntervalMs, SWEEP_IDLE_FACTOR * (performance.now() - started)));
  }

  /** Compares a polled folder with its last listing and hands on what differs, as a watch's events would. */
  private compare(dir: string): void {
    const known = this.polled.get(dir) as Polled;
    const st = lstatSync(dir, { bigint: true, throwIfNoEntry: false });
    let now: Map<string, string>;
    try {
      if (st === undefined || !st.isDirectory() || st.ino !== known.ino) throw new Error('gone');
      now = this.listPolled(dir);
    } catch {
      this.drop(dir);
      if (!this.spec.ignored(dir)) this.handlers.onEvent(dir, 'unlinkDir');
      return;
    }
    for (const [name, sig] of now) {
      const before = known.entries.get(name);
      if (before === sig) continue;
      const path = join(dir, name);
      if (before !== undefined && (before.startsWith('d') || sig.startsWith('d'))) this.drop(path);
      if (sig.startsWith('d')) {
        if (!this.skipNames.has(name)) this.add(path);
        this.handlers.onEvent(path, 'addDir');
      } else this.handlers.onEvent(path, before === undefined || before.startsWith('d') ? 'add' : 'change');
    }
    for (const [name, sig] of known.entries) {
      if (now.has(name)) continue;
      const path = join(dir, name);
      if (sig.startsWith('d')) this.drop(path);
      this.handlers.onEvent(path, sig.startsWith('d') ? 'unlinkDir' : 'unlink');
    }
    known.entries = now;
  }

  /** Tells the daemon how many folders are polled, when that changed. */
  private report(): void {
    const now = { polled: this.polled.size, watched: this.folders.size };
    if (this.closed || (now.polled === this.reported.polled && (now.polled === 0 || now.watched === this.reported.watched))) return;
    this.reported = now;
    this.handlers.onPolled?.(now);
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
    const known = this.folders.get(path) ?? this.polled.get(path);
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

  /** Closes the watches of `dir` and of every folder below it, and stops polling them. */
  private drop(dir: string): void {
    const below = dir + sep;
    for (const [path, w] of this.folders) {
      if (path !== dir && !path.startsWith(below)) continue;
      this.folders.delete(path);
      w.watcher.close();
    }
    for (const path of [...this.polled.keys()]) if (path === dir || path.startsWith(below)) this.polled.delete(path);
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
    if (this.sweepTimer !== null) clearTimeout(this.sweepTimer);
    for (const w of this.folders.values()) w.watcher.close();
    this.folders.clear();
    this.polled.clear();
  }
}

/** What a sweep compares of an entry: a folder by its inode, anything else by inode, size and mtime. */
function signature(st: Stats): string {
  return st.isDirectory() ? `d${st.ino}` : `f${st.ino}:${st.size}:${st.mtimeMs}`;
}
