import type { SyncDeps } from '../sync/executor/index.js';
import { cronWindow } from '../shared/cron.js';
import { createDaemonContext } from './context.js';
import { createDaemonCycle } from './cycle.js';
import { cycleAlone, createPlanAnswerer } from './plan-answer.js';
import { startPlanServer } from './plan-server.js';
import { createScheduler } from './scheduler.js';
import { localStatePath } from '../shared/state-url.js';
import type { DaemonSnapshot } from './snapshot.js';
import type { CreateWatcher } from './watcher.js';
import { createDaemonWatching } from './watching.js';

export type DaemonOptions = {
  /** Aborted to shut down (SIGTERM, SIGINT). */
  signal: AbortSignal;
  createWatcher: CreateWatcher;
  /** Called whenever the snapshot changes (after a cycle, at start and at the end). */
  onSnapshot?: (snapshot: DaemonSnapshot) => void;
  nowMs?: () => number;
};

export type DaemonResult = { cycles: number; graceExpired: boolean };

/**
 * `kbsync watch`: a first sync (which finds what changed while nothing was watching), then a sync cycle
 * after each burst of file-system events has been quiet for watch.debounceMs, after each git source's
 * pollSeconds, when a budget period that deferred work opens again, and at least every
 * watch.rescanMinutes. Each cycle is an ordinary sync (cycle.ts); the watchers (watching.ts) only say
 * when to look. At the abort of `signal` the watchers close, no new paid call starts, and the cycle
 * running is given watch.shutdownGraceSeconds to finish.
 */
export async function runWatchDaemon(deps: SyncDeps, o: DaemonOptions): Promise<DaemonResult> {
  const { config, logger } = deps;
  const w = config.watch;
  const nowMs = o.nowMs ?? Date.now;
  const ctx = createDaemonContext(deps, { signal: o.signal, nowMs, ...(o.onSnapshot ? { onSnapshot: o.onSnapshot } : {}) });
  const cycle = createDaemonCycle(ctx);
  const scheduler = createScheduler({
    debounceMs: w.debounceMs,
    rescanMs: w.rescanMinutes * 60_000,
    nowMs,
    window: w.schedule === null ? null : cronWindow(w.schedule),
    runCycle: (reasons) => cycleAlone(ctx.plans, () => cycle.run(reasons)),
    onIdle: ctx.publish,
    onCycleError: cycle.onError,
  });
  ctx.attach(scheduler);
  const watching = createDaemonWatching(ctx, o.createWatcher);
  await watching.start();
  // `kbsync plan` asks the daemon over a local socket, and is answered from what it holds in memory.
  const answer = createPlanAnswerer({ deps, gate: ctx.plans, keptIndex: cycle.keptIndex, logger });
  const plans = await startPlanServer({ localStatePath: localStatePath(config), answer, logger });

  // Git sources: each fetched every pollSeconds by a sync cycle (which syncs what a moved ref changed).
  const gitTimers = config.sources
    .filter((s) => s.git !== undefined)
    .map((s) => setInterval(() => scheduler.soon('git-poll'), (s.git as { pollSeconds: number }).pollSeconds * 1000));

  if (w.schedule !== null) logger.info({ schedule: w.schedule }, 'syncing only in the minutes watch.schedule matches (UTC)');
  scheduler.soon('start');
  ctx.publish();

  await new Promise<void>((resolve) => {
    if (ctx.lifetime.signal.aborted) resolve();
    else ctx.lifetime.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  logger.info({ graceSeconds: w.shutdownGraceSeconds }, 'shutting down: no new paid call starts; calls in flight may finish');
  for (const t of gitTimers) clearInterval(t);
  await watching.close();
  await plans?.close();
  ctx.cycleAbort.abort();
  let graceTimer: NodeJS.Timeout | undefined;
  const grace = new Promise<'expired'>((resolve) => (graceTimer = setTimeout(() => resolve('expired'), w.shutdownGraceSeconds * 1000)));
  const ended = await Promise.race([scheduler.stop().then(() => 'ended' as const), grace]);
  clearTimeout(graceTimer);
  await cycle.close();
  ctx.publish();
  const { counters } = ctx.snapshot;
  if (ended === 'expired')
    logger.warn(
      { graceSeconds: w.shutdownGraceSeconds },
      'calls still in flight after the grace period; the next start settles their outcome from the remote listing',
    );
  else logger.info({ cycles: counters.cycles }, 'stopped');
  const fatal = cycle.fatal();
  if (fatal !== null) throw fatal;
  return { cycles: counters.cycles, graceExpired: ended === 'expired' };
}
