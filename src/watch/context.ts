import { basename, dirname, sep } from 'node:path';
import { realpathSync } from 'node:fs';
import type { SyncDeps } from '../sync/executor/index.js';
import { localStatePath } from '../shared/state-url.js';
import { createBurst, type Burst } from './burst.js';
import { createPlanGate, type PlanGate } from './plan-answer.js';
import type { Scheduler } from './scheduler.js';
import { newSnapshot, type DaemonSnapshot } from './snapshot.js';
import { createStillWriting, type StillWriting } from './still-writing.js';
import { waitingFor } from './waiting-for.js';

/** Names of the probe files the daemon writes at start; their events are the probe's, not changes. */
export const PROBE_PREFIX = '.kbsync-watch-probe-';
export const PATHS_NEVER_WATCHED = new Set(['.git', 'node_modules']);

/** A folder source as the daemon watches it: by its real path. */
export type FolderSource = { name: string; path: string; followSymlinks: boolean };

/**
 * What the daemon's parts share: the sync's dependencies, the snapshot they report into, the burst of
 * events the next cycle looks at, and the scheduler (attached once made, since it calls the cycle).
 */
export type DaemonContext = {
  deps: SyncDeps;
  nowMs: () => number;
  iso: (ms?: number) => string;
  snapshot: DaemonSnapshot;
  /** Ended by the signal, or by an error no retry can mend. */
  lifetime: AbortController;
  /** Aborted at shutdown: no new paid call starts. */
  cycleAbort: AbortController;
  folderSources: readonly FolderSource[];
  burst: Burst;
  /** Paths whose events are not changes: the state, the embedded service's data, `.git`, `node_modules`. */
  ignored: (absPath: string) => boolean;
  /** What the cycles and the answers to `kbsync plan` tell each other (plan-answer.ts). */
  plans: PlanGate;
  /** The files a cycle holds back because they are still being written (still-writing.ts). */
  writing: StillWriting;
  readonly scheduler: Scheduler;
  attach(scheduler: Scheduler): void;
  /** Recomputes what the daemon waits for and hands the snapshot to its reader. */
  publish(): void;
};

export function createDaemonContext(
  deps: SyncDeps,
  o: { signal: AbortSignal; nowMs: () => number; onSnapshot?: (snapshot: DaemonSnapshot) => void; snapshot?: DaemonSnapshot },
): DaemonContext {
  const { config } = deps;
  const { nowMs } = o;
  const iso = (ms = nowMs()): string => new Date(ms).toISOString();
  // A context made again after a config reload reports into the daemon's snapshot.
  const snapshot = o.snapshot ?? newSnapshot(iso());
  o.onSnapshot?.(snapshot);
  const lifetime = new AbortController();
  if (o.signal.aborted) lifetime.abort();
  else o.signal.addEventListener('abort', () => lifetime.abort(), { once: true });

  // What the state and the embedded service write is not a change. A watcher reports real paths: a
  // folder reached through a symlink is compared under both names.
  const stateFile = basename(localStatePath(config));
  const stateDirs = bothNames(dirname(localStatePath(config)));
  const dataDirs = config.target.kind === 'embedded' ? bothNames(config.target.dataDir) : [];
  const ignored = (absPath: string): boolean => {
    if (dataDirs.some((dataDir) => absPath === dataDir || absPath.startsWith(dataDir + sep))) return true;
    if (stateDirs.includes(dirname(absPath)) && basename(absPath).startsWith(stateFile)) return true;
    return absPath.split(sep).some((part) => PATHS_NEVER_WATCHED.has(part));
  };
  // Watched by their real path: inotify (@parcel/watcher) refuses a symlink as the root ("Not a
  // directory"), which left a symlinked source polled, and events and probe files come back real.
  const folderSources = config.sources
    .filter((s): s is typeof s & { path: string } => s.path !== undefined)
    .map((s) => ({ name: s.name, path: realPathOr(s.path), followSymlinks: s.followSymlinks }));
  let attached: Scheduler | null = null;
  // A file held back goes once its writer closed it or it settled: a cycle then plans it again (it is carried).
  const writing = createStillWriting({ nowMs, wake: () => attached?.soon('changes') });
  lifetime.signal.addEventListener('abort', () => writing.close(), { once: true });
  const burstSources = folderSources.map((s) => ({ name: s.name, root: s.path, followSymlinks: s.followSymlinks }));
  const plans = createPlanGate(createBurst({ sources: burstSources, nowMs, statPaths: false }));
  const events = createBurst({ sources: burstSources, nowMs, onFileStat: writing.seen });
  // Each event is a change for the plan answers too (PlanGate.changes), which keep them past the cycles.
  const burst: Burst = {
    ...events,
    add(absPath) {
      plans.changes.add(absPath);
      return events.add(absPath);
    },
    whole() {
      plans.changes.whole();
      events.whole();
    },
  };

  const ctx: DaemonContext = {
    deps,
    nowMs,
    iso,
    snapshot,
    lifetime,
    cycleAbort: new AbortController(),
    folderSources,
    burst,
    ignored,
    plans,
    writing,
    get scheduler(): Scheduler {
      if (attached === null) throw new Error('the daemon scheduler is not attached yet');
      return attached;
    },
    attach(scheduler) {
      attached = scheduler;
    },
    publish() {
      if (attached !== null) {
        snapshot.waitingFor = waitingFor(attached, snapshot.watches, config.sources, iso);
        const t = snapshot.target;
        if (!t.reachable)
          snapshot.waitingFor.unshift(
            `the target to answer (${t.nextProbeAt === null ? 'a sync is trying it' : `tried again at ${t.nextProbeAt}`})`,
          );
      }
      o.onSnapshot?.(snapshot);
    },
  };
  return ctx;
}

/** The real path of `path` (symlinks resolved), or `path` itself when it cannot be resolved (missing). */
function realPathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** `path` and its real path, once each. */
function bothNames(path: string): string[] {
  const real = realPathOr(path);
  return real === path ? [path] : [path, real];
}
