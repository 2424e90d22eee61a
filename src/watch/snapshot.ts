import type { DeferredWork } from './deferred.js';
import type { CycleReason } from './scheduler.js';
import { reachableTarget, type TargetStatus } from './target-health.js';
import type { WatchBackend } from './watcher.js';

/** How one folder source is watched, and why (the probe's verdict, a fall-back). */
export type SourceWatch = {
  source: string;
  root: string;
  backend: WatchBackend | 'none';
  note: string | null;
  /** Out of inotify watches with `backend: events`: the folders polled one by one, beside those watched (the note says why). */
  folders?: { polled: number; watched: number };
};

/** Counters since the start (for /metrics). */
export type DaemonCounters = {
  cycles: number;
  cyclesFailed: number;
  rescans: number;
  uploads: number;
  failures: number;
  /** Copies the service finished processing, as the daemon's listing saw them. */
  processed: number;
  retries: number;
  watcherErrors: number;
  events: number;
  /** Folders found not watched after a cycle walked them, and watched since (see createWatchRepair). */
  watchRepairs: number;
  creditsSpent: number;
};

/** The config reloads of a running daemon (SIGHUP, the config file changed): how many, and the last one. */
export type ConfigReloadStatus = {
  reloads: { applied: number; refused: number; failed: number };
  last: {
    at: string;
    trigger: 'SIGHUP' | 'file';
    outcome: 'applied' | 'refused' | 'failed' | 'unchanged';
    /** The keys changed, with their values when not secret. */
    changed: string[];
    /** Each problem with its file and line, or what needs a restart. */
    errors: string[];
  } | null;
};

/** The cycle running now: why, its paid calls settled of those planned, credits so far, and when the rate limit has them end. */
export type RunningCycle = {
  startedAt: string;
  reasons: CycleReason[];
  /** Paid calls settled, of `total` planned (0 of 0 until the plan is made). */
  done: number;
  total: number;
  creditsSoFar: number;
  /** When the calls left end at upload.requestsPerSecond, when that pace is what holds them (null: it does not). */
  etaAt: string | null;
};

/** The balance the service reported (its dataset's credits_remaining), and when: null until it says one. */
export type ServiceBalance = { credits: number; at: string };

/** What the daemon is doing: `kbsync status`, /readyz and /metrics read it. */
export type DaemonSnapshot = {
  pid: number;
  startedAt: string;
  /** True once the first sync cycle has ended without an error. */
  ready: boolean;
  watches: SourceWatch[];
  lastSync: {
    at: string;
    reasons: CycleReason[];
    status: 'done' | 'stopped';
    uploaded: number;
    deferred: number;
    failed: number;
    /** Calls whose outcome is unknown (settled against the listing by a later cycle). */
    unknown?: number;
    creditsSpent: number;
  } | null;
  /** Copies sent and still queued or processing at the daemon's last listing, and when it reads the next (null: none). */
  remote: { processing: number; nextListingAt: string } | null;
  /** What the last cycle deferred by the budget, and what it waits for (null: nothing). */
  deferred: DeferredWork | null;
  /** The cycle running now (null between cycles). */
  cycle: RunningCycle | null;
  balance: ServiceBalance | null;
  lastSuccessAt: string | null;
  lastError: { at: string; message: string } | null;
  /** Whether the target answers, since when it does not, and what waits for it. */
  target: TargetStatus;
  waitingFor: string[];
  counters: DaemonCounters;
  config: ConfigReloadStatus;
};

/** The snapshot of a daemon that has just started: not ready, nothing synced, every counter 0. */
export function newSnapshot(startedAt: string): DaemonSnapshot {
  return {
    pid: process.pid,
    startedAt,
    ready: false,
    watches: [],
    lastSync: null,
    deferred: null,
    remote: null,
    cycle: null,
    balance: null,
    lastSuccessAt: null,
    lastError: null,
    target: reachableTarget(),
    waitingFor: [],
    counters: {
      cycles: 0,
      cyclesFailed: 0,
      rescans: 0,
      uploads: 0,
      failures: 0,
      processed: 0,
      retries: 0,
      watcherErrors: 0,
      events: 0,
      watchRepairs: 0,
      creditsSpent: 0,
    },
    config: { reloads: { applied: 0, refused: 0, failed: 0 }, last: null },
  };
}
