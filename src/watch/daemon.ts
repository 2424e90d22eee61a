import { basename, dirname, sep } from 'node:path';
import { realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { errorText, isKbsyncError } from '../shared/errors.js';
import { runSync, type SyncDeps, type SyncRun } from '../sync/executor/index.js';
import type { DeltaPass } from '../sync/executor/prepare.js';
import type { TrackedIndex } from '../sync/tracked-index.js';
import { createBurst } from './burst.js';
import { createSettleWait } from './settle.js';
import { refreshKeptIndex } from './kept-index.js';
import type { BudgetPeriod } from '../sync/types.js';
import { cronWindow } from '../shared/cron.js';
import { releaseMemory, whileYoungGenerationGrows } from '../shared/release-memory.js';
import { rolloverAtMs } from './rollover.js';
import { createFileLines } from './file-lines.js';
import { createScheduler, type CycleReason, type Scheduler } from './scheduler.js';
import { waitingFor } from './waiting-for.js';
import type { CreateWatcher, FolderWatcher, WatchBackend } from './watcher.js';
import { newSnapshot, type DaemonSnapshot, type SourceWatch } from './snapshot.js';
import { localStatePath } from '../shared/state-url.js';

export type DaemonOptions = {
  /** Aborted to shut down (SIGTERM, SIGINT). */
  signal: AbortSignal;
  createWatcher: CreateWatcher;
  /** Called whenever the snapshot changes (after a cycle, at start and at the end). */
  onSnapshot?: (snapshot: DaemonSnapshot) => void;
  nowMs?: () => number;
};

export type DaemonResult = { cycles: number; graceExpired: boolean };

/** Names of the probe files the daemon writes at start; their events are the probe's, not changes. */
const PROBE_PREFIX = '.kbsync-watch-probe-';
const PATHS_NEVER_WATCHED = new Set(['.git', 'node_modules']);
const ENOSPC_ADVICE =
  'out of inotify watches (ENOSPC): raise the limit with `sudo sysctl fs.inotify.max_user_watches=524288` (persist it in /etc/sysctl.d/), or set watch.backend: polling';

/**
 * `kbsync watch`: a first sync (which finds what changed while nothing was watching), then a sync cycle
 * after each burst of file-system events has been quiet for watch.debounceMs, after each git source's
 * pollSeconds, when a budget period that deferred work opens again, and at least every
 * watch.rescanMinutes. Each cycle is an ordinary sync (the same walk, plan, outbox and cost rules): an
 * event only says when to look, the walk decides what changed. At the abort of `signal` the watchers
 * close, no new paid call starts, and the cycle running is given watch.shutdownGraceSeconds to finish.
 */
export async function runWatchDaemon(deps: SyncDeps, o: DaemonOptions): Promise<DaemonResult> {
  const { config, logger } = deps;
  const nowMs = o.nowMs ?? Date.now;
  const iso = (ms = nowMs()): string => new Date(ms).toISOString();
  const w = config.watch;
  const snapshot = newSnapshot(iso());
  const { counters } = snapshot;
  o.onSnapshot?.(snapshot);
  const cycleAbort = new AbortController();
  // Ended by the signal, or by an error no retry can mend (thrown once the daemon has shut down).
  const lifetime = new AbortController();
  let fatal: unknown = null;
  if (o.signal.aborted) lifetime.abort();
  else o.signal.addEventListener('abort', () => lifetime.abort(), { once: true });
  let failuresInARow = 0;
  let rollover: { atMs: number; period: BudgetPeriod } | null = null;
  const logFileLines = createFileLines(logger);

  const runCycle = async (reasons: readonly CycleReason[]): Promise<void> => {
    if (reasons.includes('budget-rollover'))
      logger.info({ period: rollover?.period }, 'budget period rolled over: starting the deferred work');
    if (reasons.includes('budget-rollover')) rollover = null;
    // That a cycle runs is published once it waits for something: the status file's write (~1 ms) is
    // not on a change's way to the outbox.
    setImmediate(publish);
    const scoped = await syncAndRecord(reasons);
    failuresInARow = 0;
    // Between cycles the daemon holds only what it tracks and watches: the cycle's walk, plan and report
    // are garbage now (syncAndRecord's frame, which held them, is gone). Given back before the snapshot
    // says ready, not whenever V8 gets to it. Not after a cycle of a few folders: little garbage, and a
    // full collection (tens of ms over the kept index) between two changes is not worth it.
    const releasedMs = nowMs();
    if (!scoped && releaseMemory())
      logger.debug({ tookMs: nowMs() - releasedMs, rssBytes: process.memoryUsage.rss() }, 'memory released after the cycle');
  };

  // The tracked index, kept from one cycle to the next (null: read it whole at the next cycle).
  let kept: TrackedIndex | null = null;
  // The whole index read again after a cycle that changed too much of it to update, while nothing waits.
  let keptLoading: Promise<TrackedIndex> | null = null;
  /**
   * One sync and its record. A cycle run only by events looks at the folders they touched (see
   * createBurst); any other (the start, the rescan timer, a git poll, a rollover, a retry) at every
   * source, whole. Either way unchanged files are counted, not planned, and the tracked index is the
   * one kept from the last cycle, brought up to date with what that cycle wrote.
   */
  const syncAndRecord = async (reasons: readonly CycleReason[]): Promise<boolean> => {
    const startedMs = nowMs();
    if (kept === null && keptLoading !== null) kept = await keptLoading.catch(() => null);
    keptLoading = null;
    const burstScope = burst.take();
    const scoped = kept !== null && burstScope !== null && reasons.every((r) => r === 'changes');
    const waitFor = scoped ? settleWait(burstScope, startedMs) : null;
    if (waitFor !== null) {
      // A folder the burst names whole is still being written (see createSettleWait): the burst waits for it.
      burst.untake();
      scheduler.hint('changes', waitFor);
      logger.debug({ newestChangeAt: iso(waitFor) }, 'a new folder is still being written: its cycle waits for it to settle');
      return true;
    }
    const delta: DeltaPass = { tracked: kept, scope: scoped ? burstScope : null };
    // Until this cycle ends well, nothing is kept: a failed one may have written rows it did not report.
    kept = null;
    // A full cycle over the kept index keeps almost nothing of what it allocates (its walk drops the
    // unchanged files): the young generation may grow for it (runCycle gives the memory back after).
    const sync = (): Promise<SyncRun> => runSync(deps, { signal: cycleAbort.signal, delta });
    const run = delta.tracked !== null && !scoped ? await whileYoungGenerationGrows(sync) : await sync();
    const tookMs = nowMs() - startedMs;
    // Each change looks for its content among every row: the kept index tags its hashes for that (tagSha256s).
    if (delta.tracked !== null && refreshKeptIndex(delta.tracked, run.items, deps.state)) (kept = delta.tracked).tagSha256s();
    else {
      keptLoading = deps.state.loadTrackedFilesSoon().then((index) => (index.tagSha256s(), index));
      keptLoading.catch(() => {}); // a damaged state fails the next cycle's own read, where it is reported
    }
    // What a cycle left to do (a failed or unknown call, a file changing while hashed, a stop) is in the
    // next cycle's scope, whatever folders its events name: as when every cycle walked everything.
    for (const item of run.items)
      if (item.outcome !== 'done' && item.action !== 'defer:over-budget' && folderSources.some((s) => s.name === item.source))
        burst.carry(item.source, item.path);
    recordCycle(run, reasons, tookMs, scoped);
    return scoped;
  };

  const recordCycle = (run: SyncRun, reasons: readonly CycleReason[], tookMs: number, scoped: boolean): void => {
    counters.cycles++;
    if (reasons.includes('rescan')) counters.rescans++;
    const deferredBy: BudgetPeriod[] = [];
    for (const item of run.items) {
      if (item.deferredBy !== undefined) deferredBy.push(item.deferredBy);
      if (item.outcome === 'done' && (item.action === 'upload' || item.action === 'reprocess')) counters.uploads++;
      if (item.outcome === 'failed' || item.outcome === 'unknown') counters.failures++;
    }
    logFileLines(run.items, scoped);
    counters.creditsSpent += run.totals.creditsSpent;
    const { totals } = run;
    logger.info(
      {
        reasons,
        runId: run.runId,
        scope: scoped ? 'folders' : 'all',
        tookMs,
        uploaded: totals.uploaded,
        unchanged: totals.unchanged,
        deferred: totals.deferred,
        failed: totals.failed,
        creditsSpent: totals.creditsSpent,
        reindex: run.reindex.outcome,
      },
      'sync cycle done',
    );
    for (const note of run.notes) logger.info({ note }, 'sync note');
    if (run.stop !== null && run.stop.by !== 'shutdown')
      logger.warn({ by: run.stop.by, code: run.stop.code, message: run.stop.message }, 'the sync stopped spending');
    const next = rolloverAtMs(deferredBy, nowMs());
    if (next !== null && (rollover === null || rollover.atMs !== next.atMs)) {
      rollover = next;
      scheduler.at(next.atMs, 'budget-rollover');
      logger.info(
        { period: next.period, at: iso(next.atMs), files: deferredBy.length },
        'work deferred by the budget: it starts when the period opens',
      );
    }
    // The embedded service starts with the first upload: started now, while nothing waits, it is not
    // part of the first change's way to the outbox.
    if (!snapshot.ready && config.target.kind === 'embedded') deps.getClient().catch(() => {});
    snapshot.ready = true;
    snapshot.lastSuccessAt = iso();
    snapshot.lastSync = {
      at: iso(),
      reasons: [...reasons],
      status: run.stop !== null || totals.deferred > 0 ? 'stopped' : 'done',
      uploaded: totals.uploaded,
      deferred: totals.deferred,
      failed: totals.failed,
      creditsSpent: totals.creditsSpent,
    };
  };

  const scheduler: Scheduler = createScheduler({
    debounceMs: w.debounceMs,
    rescanMs: w.rescanMinutes * 60_000,
    nowMs,
    window: w.schedule === null ? null : cronWindow(w.schedule),
    runCycle,
    onIdle: () => publish(),
    onCycleError: (err) => {
      counters.cyclesFailed++;
      failuresInARow++;
      snapshot.lastError = { at: iso(), message: errorText(err) };
      if (isKbsyncError(err, 'state_unavailable')) {
        // The PostgreSQL session is gone, and with it this runner's source locks: another runner may hold
        // them now, so no retry here. The daemon stops; its supervisor starts it again (a new session).
        fatal ??= err;
        logger.error({ err: errorText(err) }, 'the state cannot be reached: stopping (restart kbsync watch, e.g. by its supervisor)');
        lifetime.abort();
        publish();
        return;
      }
      // Never an exit: the next try comes after a back-off (5 s, 10 s... at most the rescan period), or a change.
      const waitMs = Math.min(5000 * 2 ** (failuresInARow - 1), w.rescanMinutes * 60_000);
      counters.retries++;
      logger.error({ err: errorText(err), retryInMs: waitMs }, 'sync cycle failed; trying again later');
      if (!lifetime.signal.aborted) scheduler.at(nowMs() + waitMs, 'retry');
      publish();
    },
  });

  const publish = (): void => {
    snapshot.waitingFor = waitingFor(scheduler, snapshot.watches, config.sources, iso);
    o.onSnapshot?.(snapshot);
  };

  // Folder sources: one watcher each; what the state and the embedded service write is not a change.
  const stateFile = basename(localStatePath(config));
  // A watcher reports real paths: a folder reached through a symlink is compared under both names.
  const stateDirs = bothNames(dirname(localStatePath(config)));
  const dataDirs = config.target.kind === 'embedded' ? bothNames(config.target.dataDir) : [];
  const ignored = (absPath: string): boolean => {
    if (dataDirs.some((dataDir) => absPath === dataDir || absPath.startsWith(dataDir + sep))) return true;
    if (stateDirs.includes(dirname(absPath)) && basename(absPath).startsWith(stateFile)) return true;
    return absPath.split(sep).some((part) => PATHS_NEVER_WATCHED.has(part));
  };
  const probes = new Map<string, () => void>();
  const onEvent = (absPath: string): void => {
    const name = basename(absPath);
    if (name.startsWith(PROBE_PREFIX)) {
      probes.get(absPath)?.();
      return;
    }
    counters.events++;
    scheduler.hint('changes', burst.add(absPath));
  };
  const watchers = new Map<string, FolderWatcher>();
  // Watched by their real path: inotify (@parcel/watcher) refuses a symlink as the root ("Not a
  // directory"), which left a symlinked source polled, and events and probe files come back real.
  const folderSources = config.sources
    .filter((s): s is typeof s & { path: string } => s.path !== undefined)
    .map((s) => ({ name: s.name, path: realPathOr(s.path), followSymlinks: s.followSymlinks }));
  const burst = createBurst({
    sources: folderSources.map((s) => ({ name: s.name, root: s.path, followSymlinks: s.followSymlinks })),
    nowMs,
  });
  const settleWait = createSettleWait({ debounceMs: w.debounceMs, roots: new Map(folderSources.map((s) => [s.name, s.path])), ignored });

  const startWatch = async (source: string, root: string, backend: WatchBackend, note: string | null): Promise<void> => {
    const entry: SourceWatch = { source, root, backend, note };
    const onError = (err: unknown): void => {
      counters.watcherErrors++;
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (code === 'ENOSPC' && entry.backend === 'events') {
        logger.error({ source, root }, ENOSPC_ADVICE);
        void switchToPolling(entry, `${ENOSPC_ADVICE}`);
        return;
      }
      // A watch error may hide changes: look again, everywhere (the walk is the truth).
      logger.warn({ source, root, err: errorText(err) }, 'the watcher reported an error; rescanning');
      burst.whole();
      scheduler.hint('changes');
    };
    try {
      watchers.set(
        source,
        await o.createWatcher(
          { root, backend, ignored, ignoredNames: [...PATHS_NEVER_WATCHED], pollIntervalMs: w.pollIntervalMs },
          { onEvent, onError },
        ),
      );
    } catch (err) {
      counters.watcherErrors++;
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (backend === 'events') {
        const why = code === 'ENOSPC' ? ENOSPC_ADVICE : `file-system events could not be watched (${errorText(err)})`;
        logger.error({ source, root }, `${why}; polling instead`);
        await startWatch(source, root, 'polling', why);
        return;
      }
      logger.error(
        { source, root, err: errorText(err) },
        `the folder cannot be watched at all; only the rescans every ${w.rescanMinutes} min will see its changes`,
      );
      entry.backend = 'none';
      entry.note = `cannot be watched: ${errorText(err)}`;
    }
    const at = snapshot.watches.findIndex((s) => s.source === source);
    if (at >= 0) snapshot.watches[at] = entry;
    else snapshot.watches.push(entry);
  };

  const switchToPolling = async (entry: SourceWatch, why: string): Promise<void> => {
    const current = watchers.get(entry.source);
    watchers.delete(entry.source);
    await current?.close().catch(() => {});
    if (lifetime.signal.aborted) return;
    await startWatch(entry.source, entry.root, 'polling', why);
    burst.whole();
    scheduler.hint('changes');
    publish();
  };

  /** Writes a probe file in the folder and waits for its event; no event in time means events do not work here. */
  const probe = async (root: string): Promise<'seen' | 'missed' | 'unwritable'> => {
    const path = `${root}${sep}${PROBE_PREFIX}${process.pid}`;
    const seen = new Promise<void>((resolve) => probes.set(path, resolve));
    try {
      writeFileSync(path, 'kbsync watch probe: safe to delete\n');
    } catch {
      probes.delete(path);
      return 'unwritable';
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'missed'>((resolve) => (timer = setTimeout(() => resolve('missed'), w.probeTimeoutMs)));
    const verdict = await Promise.race([seen.then(() => 'seen' as const), timeout]);
    clearTimeout(timer);
    probes.delete(path);
    try {
      unlinkSync(path);
    } catch {
      // Already gone: nothing to tidy.
    }
    return verdict;
  };

  for (const source of folderSources) {
    const backend: WatchBackend = w.backend === 'polling' ? 'polling' : 'events';
    await startWatch(source.name, source.path, backend, w.backend === 'polling' ? 'watch.backend: polling' : null);
    if (w.backend !== 'auto' || watchers.get(source.name)?.backend !== 'events') continue;
    const verdict = await probe(source.path);
    if (verdict === 'missed') {
      const why = `no file-system event arrived for a probe file within ${w.probeTimeoutMs} ms (a network mount, a Docker bind mount or WSL2?)`;
      logger.warn({ source: source.name, root: source.path, pollIntervalMs: w.pollIntervalMs }, `${why}: polling instead`);
      await switchToPolling(snapshot.watches.find((s) => s.source === source.name) as SourceWatch, why);
    } else if (verdict === 'unwritable') {
      logger.info(
        { source: source.name, root: source.path },
        'the folder is not writable, so file-system events were not probed; the rescans cover what they miss',
      );
    }
  }
  for (const s of snapshot.watches) logger.info({ source: s.source, root: s.root, backend: s.backend, note: s.note }, 'watching');

  // Git sources: each fetched every pollSeconds by a sync cycle (which syncs what a moved ref changed).
  const gitTimers = config.sources
    .filter((s) => s.git !== undefined)
    .map((s) => setInterval(() => scheduler.soon('git-poll'), (s.git as { pollSeconds: number }).pollSeconds * 1000));

  if (w.schedule !== null) logger.info({ schedule: w.schedule }, 'syncing only in the minutes watch.schedule matches (UTC)');
  scheduler.soon('start');
  publish();

  await new Promise<void>((resolve) => {
    if (lifetime.signal.aborted) resolve();
    else lifetime.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  logger.info({ graceSeconds: w.shutdownGraceSeconds }, 'shutting down: no new paid call starts; calls in flight may finish');
  for (const t of gitTimers) clearInterval(t);
  await Promise.all([...watchers.values()].map((x) => x.close().catch(() => {})));
  watchers.clear();
  cycleAbort.abort();
  let graceTimer: NodeJS.Timeout | undefined;
  const grace = new Promise<'expired'>((resolve) => (graceTimer = setTimeout(() => resolve('expired'), w.shutdownGraceSeconds * 1000)));
  const ended = await Promise.race([scheduler.stop().then(() => 'ended' as const), grace]);
  clearTimeout(graceTimer);
  publish();
  if (ended === 'expired')
    logger.warn(
      { graceSeconds: w.shutdownGraceSeconds },
      'calls still in flight after the grace period; the next start settles their outcome from the remote listing',
    );
  else logger.info({ cycles: counters.cycles }, 'stopped');
  if (fatal !== null) throw fatal;
  return { cycles: counters.cycles, graceExpired: ended === 'expired' };
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
