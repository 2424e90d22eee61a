import type { SyncDeps } from '../sync/executor/index.js';
import { cronWindow } from '../shared/cron.js';
import { createDaemonContext, type DaemonContext } from './context.js';
import { createDaemonCycle, type DaemonCycle } from './cycle.js';
import { cycleAlone, createPlanAnswerer } from './plan-answer.js';
import type { PlanReply, PlanRequest } from './plan-socket.js';
import { createScheduler, type Scheduler } from './scheduler.js';
import type { DaemonSnapshot } from './snapshot.js';
import type { CreateWatcher } from './watcher.js';
import { createDaemonWatching } from './watching.js';

/**
 * The daemon's parts made from one config: context, cycle, scheduler, watchers and git poll timers.
 * A config reload that changes sources or watch.* retires them between cycles and makes new ones.
 */
export type DaemonGeneration = {
  ctx: DaemonContext;
  cycle: DaemonCycle;
  scheduler: Scheduler;
  /** The answer to `kbsync plan` from what this generation holds in memory. */
  answer(req: PlanRequest): Promise<PlanReply>;
  /** Makes the plan answers again (a reload changed the config they read, e.g. the budget). */
  renewAnswers(): void;
  /** Stops the git timers and the watchers (the scheduler goes on). */
  closeWatchers(): Promise<void>;
  /** Stops the scheduler (at once: no cycle starts after this call), the git timers and the watchers. */
  close(): Promise<void>;
};

export async function startGeneration(
  deps: SyncDeps,
  o: {
    signal: AbortSignal;
    nowMs: () => number;
    createWatcher: CreateWatcher;
    onSnapshot?: (snapshot: DaemonSnapshot) => void;
    snapshot?: DaemonSnapshot;
  },
): Promise<DaemonGeneration> {
  const { config, logger } = deps;
  const w = config.watch;
  const { nowMs } = o;
  const ctx = createDaemonContext(deps, {
    signal: o.signal,
    nowMs,
    ...(o.onSnapshot ? { onSnapshot: o.onSnapshot } : {}),
    ...(o.snapshot ? { snapshot: o.snapshot } : {}),
  });
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

  // Git sources: each fetched every pollSeconds by a sync cycle (which syncs what a moved ref changed).
  const gitTimers = config.sources
    .filter((s) => s.git !== undefined)
    .map((s) => setInterval(() => scheduler.soon('git-poll'), (s.git as { pollSeconds: number }).pollSeconds * 1000));

  if (w.schedule !== null) logger.info({ schedule: w.schedule }, 'syncing only in the minutes watch.schedule matches (UTC)');
  // `kbsync plan` asks the daemon over a local socket, and is answered from what it holds in memory.
  const answerer = () => createPlanAnswerer({ deps, gate: ctx.plans, keptIndex: cycle.keptIndex, logger });
  let answer = answerer();
  const closeWatchers = async (): Promise<void> => {
    for (const t of gitTimers) clearInterval(t);
    await watching.close();
  };
  return {
    ctx,
    cycle,
    scheduler,
    answer: (req) => answer(req),
    renewAnswers: () => (answer = answerer()),
    closeWatchers,
    async close() {
      const stopped = scheduler.stop();
      await closeWatchers();
      await stopped;
      await cycle.close();
    },
  };
}
