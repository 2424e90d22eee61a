import { info, type Figure } from './figure.js';
import { ratio } from './measure.js';
import type { WatchDaemonResult } from './watch-daemon.js';
import type { WatchBenchResult } from './watch.js';

/** Issue 16's targets for `kbsync watch` at 100k files. */
export const WATCH_READY_MAX_MS = 2000;
export const WATCH_RSS_MAX_MB = 250;

/** `kbsync watch` (targets) and each watcher backend alone (diagnostics: why the default is @parcel/watcher). */
export function watchFigures(daemon: WatchDaemonResult | null, backends: readonly (WatchBenchResult | null)[]): Figure[] {
  const out: Figure[] = [];
  if (daemon !== null) {
    const group = `kbsync watch, ${daemon.files} files in ${daemon.folders} folders, state seeded as synced, embedded target (issue 16)`;
    const walk = { name: 'bare readdirSync + lstatSync walk of the tree', value: daemon.bareWalkMs };
    const note = daemon.problem ?? undefined;
    out.push(
      {
        group,
        name: 'spawn to ready (watchers started, first sync of the unchanged tree done)',
        value: daemon.readyMs,
        unit: 'ms',
        reference: walk,
        ratio: ratio(daemon.readyMs, daemon.bareWalkMs),
        target: `≤ ${WATCH_READY_MAX_MS} ms`,
        pass: daemon.readyMs === null ? false : daemon.readyMs <= WATCH_READY_MAX_MS,
        ...(note === undefined ? {} : { note }),
      },
      info(group, 'spawn to watching (watchers started, the first sync under way)', daemon.watchingMs, 'ms', undefined, walk),
      {
        group,
        name: 'RSS of the daemon when ready (tracking and watching)',
        value: daemon.rssReadyMb,
        unit: 'MB',
        reference: null,
        ratio: null,
        target: `≤ ${WATCH_RSS_MAX_MB} MB`,
        pass: daemon.rssReadyMb === null ? false : daemon.rssReadyMb <= WATCH_RSS_MAX_MB,
        note: `peak (VmHWM) ${daemon.rssPeakMb} MB`,
      },
      {
        group,
        name: 'inotify watches held',
        value: daemon.inotifyWatches,
        unit: 'watches',
        reference: { name: 'folders in the tree', value: daemon.folders },
        ratio: ratio(daemon.inotifyWatches, daemon.folders),
        target: 'one per folder, not per file',
        pass: daemon.inotifyWatches === null ? null : daemon.inotifyWatches <= daemon.folders,
      },
    );
  }
  for (const b of backends) {
    if (b === null) continue;
    const group = `watcher backends alone, ${b.files} files in ${b.folders} folders (diagnostics: the choice of watch.watcher)`;
    const walk = { name: 'bare readdirSync + lstatSync walk, same process', value: b.bareWalkMs };
    out.push(
      info(group, `${b.backend}: time to ready`, b.readyMs, 'ms', undefined, walk),
      info(group, `${b.backend}: RSS when ready`, b.rssReadyMb, 'MB', undefined, {
        name: 'the same process before watching',
        value: b.rssBeforeMb,
      }),
      info(group, `${b.backend}: inotify watches`, b.inotifyWatches, 'watches', `one event delivered in ${b.eventMs} ms`, {
        name: 'folders in the tree',
        value: b.folders,
      }),
    );
  }
  return out;
}
