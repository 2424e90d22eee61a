import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { BudgetCaps, StateStore } from '../../sync/state/index.js';
import type { DaemonSnapshot } from '../snapshot.js';
import { lagBeyondPeriod } from './event-loop-lag.js';

/** The event-loop lag's sampling period (see createMetrics). */
const LAG_PERIOD_MS = 5000;

/**
 * The Prometheus metrics of `kbsync watch`, read at each scrape from the daemon's snapshot and the
 * state (one SQLite read: tracked files, outbox, credits per period). Counters are totals since start,
 * moved as each paid call settles. With prom-client's default process metrics (process_*, nodejs_*).
 */
export function createMetrics(o: {
  snapshot: () => DaemonSnapshot;
  state: StateStore;
  caps: BudgetCaps;
  webhooks?: () => Readonly<Record<string, number>>;
}): Registry {
  const registry = new Registry();
  // The event-loop lag histogram samples on a timer of this period: prom-client's 10 ms default woke an
  // idle daemon 100 times a second. Every 5 s, a stall of 5 s or more always shows (a shorter one when it
  // meets a sample), and an idle daemon with --http still wakes less than once a second.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LAG_PERIOD_MS });
  lagBeyondPeriod(registry, LAG_PERIOD_MS);
  const counter = (name: string, help: string, read: (s: DaemonSnapshot) => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read(o.snapshot()));
      },
    });
  };
  const gauge = (name: string, help: string, labelNames: string[], collect: (g: Gauge) => void): void => {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        collect(this);
      },
    });
  };
  counter('kbsync_sync_cycles_total', 'Sync cycles that ended (each an ordinary sync).', (s) => s.counters.cycles);
  counter('kbsync_sync_cycles_failed_total', 'Sync cycles that ended with an error (tried again later).', (s) => s.counters.cyclesFailed);
  counter('kbsync_rescans_total', 'Sync cycles started by the periodic rescan (watch.rescanMinutes).', (s) => s.counters.rescans);
  counter('kbsync_uploads_total', 'Uploads and reprocesses done.', (s) => s.counters.uploads);
  counter(
    'kbsync_failures_total',
    'Paid calls that failed or whose outcome is unknown, and copies the service failed to process.',
    (s) => s.counters.failures,
  );
  counter(
    'kbsync_files_processed_total',
    'Copies the service finished processing, as the listing showed them.',
    (s) => s.counters.processed,
  );
  counter(
    'kbsync_retries_total',
    'Tries again after a failure: a failed sync cycle, a probe of an unreachable target, outcomes left unknown.',
    (s) => s.counters.retries,
  );
  counter(
    'kbsync_watcher_errors_total',
    'Errors reported by the file watchers (a failed watch, ENOSPC...).',
    (s) => s.counters.watcherErrors,
  );
  counter(
    'kbsync_watch_events_total',
    'File-system events received (hints: each burst leads to one sync cycle).',
    (s) => s.counters.events,
  );
  counter(
    'kbsync_watch_repairs_total',
    'Folders a sync cycle walked that the watcher did not watch (a folder made inside a new folder), watched since.',
    (s) => s.counters.watchRepairs,
  );
  counter('kbsync_credits_spent_total', 'Credits spent by this daemon since it started.', (s) => s.counters.creditsSpent);
  gauge('kbsync_files_tracked', 'Files tracked in their source now (as kbsync status; files deleted locally not counted).', [], (g) =>
    g.set(o.state.trackedCount()),
  );
  gauge('kbsync_files_failed', 'Files tracked whose remote copy the service failed to process (kbsync status names them).', [], (g) =>
    g.set(o.state.trackedCount('failed')),
  );
  const queued = (g: Gauge): void => void g.set(o.state.openOpCounts().pending);
  gauge('kbsync_queue_depth', 'Paid operations written to the outbox and not yet settled.', [], queued);
  gauge('kbsync_files_deferred', 'Files the budget holds back now (as kbsync status: "deferred by the budget").', [], (g) =>
    g.set(o.snapshot().deferred?.files ?? 0),
  );
  gauge('kbsync_ready', '1 once the first sync cycle has ended.', [], (g) => g.set(o.snapshot().ready ? 1 : 0));
  gauge(
    'kbsync_target_reachable',
    '1 while the target answers; 0 while its calls fail (changes wait, it is probed with a back-off).',
    [],
    (g) => g.set(o.snapshot().target.reachable ? 1 : 0),
  );
  gauge('kbsync_target_unreachable_since_timestamp_seconds', 'Since when the target does not answer (0: it answers).', [], (g) => {
    const since = o.snapshot().target.unreachableSince;
    g.set(since === null ? 0 : Date.parse(since) / 1000);
  });
  gauge(
    'kbsync_changes_waiting',
    'Paid operations queued or awaiting reconciliation, as the last cycle or failure counted them.',
    [],
    (g) => g.set(o.snapshot().target.changesWaiting),
  );
  gauge('kbsync_last_success_timestamp_seconds', 'When the last sync cycle ended without an error (0: none yet).', [], (g) => {
    const at = o.snapshot().lastSuccessAt;
    g.set(at === null ? 0 : Date.parse(at) / 1000);
  });
  gauge('kbsync_credits_spent', 'Credits spent in the current budget period (UTC day, UTC month).', ['period'], (g) => {
    const used = o.state.creditsUsed(null);
    g.set({ period: 'day' }, used.spent.day);
    g.set({ period: 'month' }, used.spent.month);
  });
  gauge('kbsync_credits_left', 'Credits the budget still admits in the current period (spent and reserved deducted).', ['period'], (g) => {
    const used = o.state.creditsUsed(null);
    g.set({ period: 'day' }, Math.max(0, o.caps.day - used.day));
    g.set({ period: 'month' }, Math.max(0, o.caps.month - used.month));
  });
  gauge('kbsync_watch_backend', 'The watcher backend of each folder source (1 for the one in use).', ['source', 'backend'], (g) => {
    for (const w of o.snapshot().watches) g.set({ source: w.source, backend: w.backend }, 1);
  });
  gauge('kbsync_watch_polled_folders', 'Folders of each source polled: past fs.inotify.max_user_watches.', ['source'], (g) => {
    for (const w of o.snapshot().watches) g.set({ source: w.source }, w.folders?.polled ?? 0);
  });
  new Counter({
    name: 'kbsync_config_reloads_total',
    help: 'Config reloads (SIGHUP, the config file changed) by outcome: applied, refused (needs a restart), failed (invalid).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(o.snapshot().config.reloads)) this.inc({ outcome }, n);
    },
  });
  const webhooks = o.webhooks;
  if (webhooks !== undefined) {
    new Counter({
      name: 'kbsync_webhooks_total',
      help: 'Deliveries to POST /webhooks by outcome (accepted, bad_signature, stale_timestamp, replayed...).',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(webhooks())) this.inc({ outcome }, n);
      },
    });
  }
  return registry;
}
