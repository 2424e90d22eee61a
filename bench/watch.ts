import { readdirSync, readFileSync, readlinkSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createChokidarWatcher } from '../src/watch/chokidar-watcher.js';
import { createNodeWatcher } from '../src/watch/node-watcher.js';
import { createParcelWatcher } from '../src/watch/parcel-watcher.js';
import type { CreateWatcher } from '../src/watch/watcher.js';
import { round1 } from './measure.js';
import { benchTreeOf, timeBareWalk } from './scan-tree.js';

/**
 * The watcher backends of `kbsync watch` on the bench tree, one backend per fresh process: time until the
 * watcher is ready (its first listing done), the process's RSS then, the inotify watches it holds (the
 * `inotify wd:` lines of /proc/self/fdinfo), and the delay of one event; beside the bare readdirSync +
 * lstatSync walk of the same tree in the same process, as the reference.
 */
export type WatchBackendName = 'node' | 'chokidar' | 'parcel';

export type WatchBenchResult = {
  backend: WatchBackendName;
  files: number;
  folders: number;
  bareWalkMs: number | null;
  readyMs: number;
  rssBeforeMb: number;
  rssReadyMb: number;
  inotifyWatches: number | null;
  eventMs: number | null;
};

const BACKENDS: Record<WatchBackendName, CreateWatcher> = {
  node: createNodeWatcher,
  chokidar: createChokidarWatcher,
  parcel: createParcelWatcher,
};

/** Counts the inotify watches this process holds (null where /proc has no such view). */
export function inotifyWatches(pid: number | 'self' = 'self'): number | null {
  try {
    let count = 0;
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (target !== 'anon_inode:inotify') continue;
      count += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length;
    }
    return count;
  } catch {
    return null;
  }
}

const rssMb = (): number => round1(process.memoryUsage().rss / 2 ** 20);

export async function runWatchBench(options: {
  backend: WatchBackendName;
  files?: number;
  full?: boolean;
  dir?: string;
  log?: (line: string) => void;
}): Promise<WatchBenchResult> {
  const log = options.log ?? (() => {});
  const { tree } = benchTreeOf(options);
  const counts = timeBareWalk(tree.dir);
  const rssBeforeMb = rssMb();
  const events: string[] = [];
  let onEvent: ((path: string) => void) | null = null;
  const t0 = performance.now();
  const watcher = await BACKENDS[options.backend](
    { root: tree.dir, backend: 'events', ignored: () => false, ignoredNames: ['.git', 'node_modules'], pollIntervalMs: 1000 },
    { onEvent: (path) => (events.push(path), onEvent?.(path)), onError: (err) => log(`watcher error: ${String(err)}`) },
  );
  const readyMs = round1(performance.now() - t0);
  const rssReadyMb = rssMb();
  const watches = inotifyWatches();
  log(
    `${options.backend}: ready in ${readyMs} ms, RSS ${rssReadyMb} MB, ${watches} inotify watches, ${counts.folders} folders, ${counts.files} files`,
  );
  // One file written deep in the tree: how long until its event arrives (at most 10 s).
  const probe = join(tree.dir, 'area-7', 'topic-3', 'part-0', `bench-watch-${process.pid}.md`);
  const seen = new Promise<number>((resolve) => (onEvent = (path) => path === probe && resolve(performance.now())));
  const written = performance.now();
  writeFileSync(probe, 'x\n');
  const eventAt = await Promise.race([seen, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
  rmSync(probe, { force: true });
  await watcher.close();
  return {
    backend: options.backend,
    files: counts.files,
    folders: counts.folders,
    bareWalkMs: counts.medianMs,
    readyMs,
    rssBeforeMb,
    rssReadyMb,
    inotifyWatches: watches,
    eventMs: eventAt === null ? null : round1(eventAt - written),
  };
}
