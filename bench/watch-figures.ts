import { info, type Figure } from './figure.js';
import { median, ratio } from './measure.js';
import type { WatchDaemonResult } from './watch-daemon.js';
import type { WatchBenchResult } from './watch.js';

/** Targets for `kbsync watch` at 100k files. */
export const WATCH_READY_MAX_MS = 2000;
export const WATCH_RSS_MAX_MB = 250;
/** A change reaches the outbox within watch.debounceMs + this. */
export const WATCH_CHANGE_SLACK_MS = 10;
/** An idle daemon wakes at most this often, every thread counted (the default watcher, watch.watcher: node). */
export const WATCH_IDLE_MAX_WAKEUPS_PER_S = 1;
/** A rescan of the unchanged tree takes at most this times the bare walk. */
export const WATCH_RESCAN_MAX_RATIO = 1.2;

/** `kbsync watch` (targets) and each watcher backend alone (diagnostics: why the default is @parcel/watcher). */
export function watchFigures(daemon: WatchDaemonResult | null, backends: readonly (WatchBenchResult | null)[]): Figure[] {
  const out: Figure[] = [];
  if (daemon !== null) {
    const group = `kbsync watch, ${daemon.files} files in ${daemon.folders} folders, state seeded as synced, embedded target`;
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
        // The config file's folder is watched too (a reload at each edit).
        reference: { name: "folders in the tree, and the config file's", value: daemon.folders + 1 },
        ratio: ratio(daemon.inotifyWatches, daemon.folders + 1),
        target: 'one per folder, not per file',
        pass: daemon.inotifyWatches === null ? null : daemon.inotifyWatches <= daemon.folders + 1,
      },
      ...latencyFigures(daemon, group, walk),
      ...idleFigures(daemon, group),
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

/** The change-to-outbox latency and rescan duration, from the daemon left running after ready. */
function latencyFigures(daemon: WatchDaemonResult, group: string, walk: { name: string; value: number | null }): Figure[] {
  const changes = daemon.changeToOutboxMs;
  const maxChange = changes.length === 0 ? null : Math.max(...changes);
  const limit = daemon.debounceMs + WATCH_CHANGE_SLACK_MS;
  const cycles = daemon.changeCycleMs.filter((c): c is number => c !== null);
  const changePass = maxChange === null || daemon.latencyProblem !== null ? false : maxChange <= limit;
  const changeNote = [
    `${changes.length} new files, one at a time: median shown, max ${maxChange} ms; write to the op's created_at (seen by a 1 ms poll of the state after ${median(daemon.changeSeenMs)} ms median)`,
    changePass
      ? null
      : `the cycle after each change walks only the folders its events touched (${median(cycles)} ms median per cycle, of ${daemon.files} files tracked); the median meets the target, the slowest changes do not`,
    daemon.latencyProblem,
  ]
    .filter((n) => n !== null)
    .join('; ');
  const rescan = median(daemon.rescanMs);
  const rescanRatio = ratio(rescan, daemon.bareWalkMs);
  const rescanPass = rescanRatio === null || daemon.latencyProblem !== null ? false : rescanRatio <= WATCH_RESCAN_MAX_RATIO;
  const rescanNote = [
    `${daemon.rescanMs.length} cycles of the rescan timer alone (watch.rescanMinutes), their tookMs as the daemon logs it: ${daemon.rescanMs.join(', ')} ms`,
    daemon.latencyProblem,
  ]
    .filter((n) => n !== null)
    .join('; ');
  return [
    {
      group,
      name: `a change reaches the outbox (new file written until its op is enqueued; watch.debounceMs ${daemon.debounceMs})`,
      value: median(changes),
      unit: 'ms',
      reference: { name: 'watch.debounceMs', value: daemon.debounceMs },
      ratio: ratio(median(changes), daemon.debounceMs),
      target: `each ≤ debounceMs + ${WATCH_CHANGE_SLACK_MS} ms (${limit} ms)`,
      pass: changePass,
      note: changeNote,
    },
    {
      group,
      name: 'rescan of the unchanged tree (a full sync cycle run by the rescan timer)',
      value: rescan,
      unit: 'ms',
      reference: walk,
      ratio: rescanRatio,
      target: `≤ ${WATCH_RESCAN_MAX_RATIO}× the bare walk`,
      pass: rescanPass,
      note: rescanNote,
    },
  ];
}

/** The daemon idle (no change, no cycle): how often its threads wake, and the CPU that costs. */
function idleFigures(daemon: WatchDaemonResult, group: string): Figure[] {
  const idle = daemon.idle;
  const threads = idle === null ? 'not measured' : idle.byThread.map(([name, n]) => `${name} ${n}/s`).join(', ');
  return [
    {
      group,
      name: 'idle wake-ups (context switches of every thread, no cycle due)',
      value: idle?.wakeupsPerS ?? null,
      unit: '/s',
      reference: null,
      ratio: null,
      target: `≤ ${WATCH_IDLE_MAX_WAKEUPS_PER_S}/s`,
      pass: idle === null ? false : idle.wakeupsPerS <= WATCH_IDLE_MAX_WAKEUPS_PER_S,
      note: `over ${idle?.windowMs ?? '?'} ms, rescans hourly (the config reloaded after the rescans above), no --http, by thread: ${threads}`,
    },
    info(group, 'idle CPU (user + system, share of one core)', idle?.cpuPercent ?? null, '%'),
  ];
}
