import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { errorText } from '../shared/errors.js';
import type { BurstScope } from './burst.js';
import { PATHS_NEVER_WATCHED, type DaemonContext } from './context.js';
import type { CycleReason } from './scheduler.js';
import type { FolderWatcher } from './watcher.js';

/** Past this many extra watches on one source, its root is watched again from scratch instead. */
export const MAX_EXTRA_WATCHES = 64;

/**
 * The inodes of the folders this process watches with inotify (every inotify instance: @parcel/watcher's
 * and libuv's), from /proc/self/fdinfo; null where that cannot be known (not Linux, no /proc). Keyed by
 * inode alone: the device number inotify reports is the file system's, which stat does not always give
 * (btrfs subvolumes), and a source spans one file system almost always.
 */
export function inotifyWatchedInodes(): Set<bigint> | null {
  if (process.platform !== 'linux') return null;
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return null;
  }
  const inodes = new Set<bigint>();
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
      for (const m of info.matchAll(/^inotify wd:\S+ ino:([0-9a-f]+) /gm)) inodes.add(BigInt(`0x${m[1] as string}`));
    } catch {
      // An fd closed while listed: not a watch of ours any more.
    }
  }
  return inodes;
}

/**
 * The top-most folders at or below `dirs` that no inotify watch covers, nor polling (a folder not watched: its
 * subfolders are not looked at, a watch of it will cover them). Ignored paths, `.git`, `node_modules`
 * and symlinks are not watched and not looked at.
 */
export function unwatchedFolders(
  dirs: readonly string[],
  o: { watched: ReadonlySet<bigint>; ignored: (absPath: string) => boolean; polled?: (absDir: string) => boolean },
): string[] {
  const found: string[] = [];
  const stack = [...dirs];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    if (seen.has(dir)) continue;
    seen.add(dir);
    let ino: bigint;
    try {
      const st = lstatSync(dir, { bigint: true });
      if (!st.isDirectory()) continue;
      ino = st.ino;
    } catch {
      continue; // gone since the walk: nothing to watch
    }
    if (!o.watched.has(ino) && o.polled?.(dir) !== true) {
      found.push(dir);
      continue;
    }
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (!e.isDirectory() || PATHS_NEVER_WATCHED.has(e.name)) continue;
      const path = join(dir, e.name);
      if (!o.ignored(path)) stack.push(path);
    }
  }
  return found;
}

export type WatchRepair = {
  /** After a cycle: the folders it walked (a scope, or every source) must be watched; those that are not get a watch of their own. */
  afterCycle(scope: BurstScope, reasons: readonly CycleReason[]): Promise<void>;
  close(): Promise<void>;
};

/**
 * Keeps every folder a cycle walked watched. @parcel/watcher on Linux watches a folder made inside a
 * new folder only if it sees the folder's own create event, which it misses when the inner folder was
 * made before the outer one's watch existed (`mkdir -p`, `cp -r`, an unzip, a checkout): files there
 * were uploaded by the walk, but their later edits were seen only by the rescan. After a cycle that
 * walked new folders (or everything) the daemon compares them with the process's inotify watches and
 * watches each top-most unwatched folder explicitly; past MAX_EXTRA_WATCHES on a source it watches
 * the source again from its root. Each repair is counted (kbsync_watch_repairs_total) and logged, and
 * the repaired folders are walked again (a file made before their watch existed).
 */
export function createWatchRepair(
  ctx: DaemonContext,
  o: {
    /** Watches one folder of a source with the source's handlers (file-system events). */
    watchFolder(source: string, absDir: string): Promise<FolderWatcher>;
    /** Watches the source again from its root; the old watch is closed. */
    rewatchRoot(source: string): Promise<void>;
    /** Whether the source is watched by file-system events (the only backend whose watches are checked). */
    byEvents(source: string): boolean;
    /** Whether the source's watcher polls `absDir` (out of inotify watches): covered, not to be repaired. */
    polled?(source: string, absDir: string): boolean;
    watchedInodes?: () => Set<bigint> | null;
  },
): WatchRepair {
  const { logger } = ctx.deps;
  const { counters } = ctx.snapshot;
  const readWatched = o.watchedInodes ?? inotifyWatchedInodes;
  const extras = new Map<string, Map<string, FolderWatcher>>();
  const failed = new Set<string>();
  let closed = false;

  const dropExtras = async (source: string, which: (dir: string) => boolean): Promise<void> => {
    const mine = extras.get(source);
    if (mine === undefined) return;
    for (const [dir, watcher] of [...mine]) {
      if (!which(dir)) continue;
      mine.delete(dir);
      await watcher.close().catch(() => {});
    }
  };

  const afterCycle = async (scope: BurstScope, reasons: readonly CycleReason[]): Promise<void> => {
    try {
      await check(scope, reasons);
    } catch (err) {
      // The cycle itself went well: a check that fails leaves the folders to the rescans.
      logger.warn({ err: errorText(err) }, 'the watched folders could not be checked after the cycle');
    }
  };

  const check = async (scope: BurstScope, reasons: readonly CycleReason[]): Promise<void> => {
    // A scoped cycle walked new folders; a full one after events or a rescan walked every folder. The
    // first cycle's folders were all listed by the watch that just started.
    if (closed || (scope === null && !reasons.some((r) => r === 'changes' || r === 'rescan'))) return;
    const targets = new Map<string, string[]>();
    for (const s of ctx.folderSources) {
      if (!o.byEvents(s.name)) continue;
      const dirs =
        scope === null
          ? [s.path]
          : scope
              .get(s.name)
              ?.filter((d) => !d.direct)
              .map((d) => join(s.path, d.dir));
      if (dirs !== undefined && dirs.length > 0) targets.set(s.name, dirs);
    }
    if (targets.size === 0) return;
    const watched = readWatched();
    if (watched === null) return;
    const repaired: { source: string; dir: string }[] = [];
    for (const [source, dirs] of targets) {
      // A folder gone since its extra watch was made needs the watch no more.
      await dropExtras(source, (dir) => lstatSync(dir, { throwIfNoEntry: false }) === undefined);
      // A folder whose watch failed once (unreadable...) is not tried at every cycle.
      const missing = unwatchedFolders(dirs, { watched, ignored: ctx.ignored, polled: (dir) => o.polled?.(source, dir) === true }).filter(
        (d) => !failed.has(d),
      );
      if (missing.length === 0) continue;
      const root = ctx.folderSources.find((s) => s.name === source)?.path as string;
      const mine = extras.get(source) ?? new Map<string, FolderWatcher>();
      extras.set(source, mine);
      if (mine.size + missing.length > MAX_EXTRA_WATCHES || missing.includes(root)) {
        await dropExtras(source, () => true);
        await o.rewatchRoot(source);
        counters.watchRepairs += missing.length;
        logger.warn({ source, folders: missing.length }, 'folders were not watched: the source is watched again from its root');
        repaired.push({ source, dir: root });
        continue;
      }
      for (const dir of missing) {
        try {
          await mine.get(dir)?.close();
          mine.set(dir, await o.watchFolder(source, dir));
          counters.watchRepairs++;
          repaired.push({ source, dir });
        } catch (err) {
          failed.add(dir);
          counters.watcherErrors++;
          logger.warn({ source, dir, err: errorText(err) }, 'a folder not watched could not be watched; the rescans cover it');
        }
      }
    }
    if (repaired.length === 0) return;
    // Files made there after the walk and before the watch: the next cycle walks the folders again;
    // only those now seen watched, so a watch that does not show in /proc cannot repeat the cycle.
    const now = readWatched() ?? new Set<bigint>();
    const verified = repaired.filter((r) => now.has(lstatSync(r.dir, { bigint: true, throwIfNoEntry: false })?.ino ?? -1n));
    logger.info(
      { folders: repaired.length, sample: repaired.slice(0, 5).map((r) => r.dir) },
      'folders the watcher had missed are watched now (a folder made inside a new folder); walking them again',
    );
    if (verified.length < repaired.length)
      logger.warn(
        { folders: repaired.length - verified.length },
        'some folders still show no watch after their repair; the rescans cover them',
      );
    for (const r of verified) ctx.scheduler.hint('changes', ctx.burst.add(r.dir));
  };

  const close = async (): Promise<void> => {
    closed = true;
    for (const source of [...extras.keys()]) await dropExtras(source, () => true);
  };

  return { afterCycle, close };
}
