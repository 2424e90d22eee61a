import type { SyncDeps } from '../sync/executor/index.js';
import { cronWindow } from '../shared/cron.js';
import { createDaemonContext, type DaemonContext } from './context.js';
import { createDaemonCycle, type DaemonCycle } from './cycle.js';
import { createScheduler, type Scheduler } from './scheduler.js';
import type { DaemonSnapshot } from './snapshot.js';
import type { CreateWatcher } from './watcher.js';
import type { FileLines } from './file-lines.js';
import { createGitPoll } from './git-poll.js';
import { createDaemonWatching, type DaemonWatching } from './watching.js';
import { createPlanAnswerer, cycleAlone } from './plan-answer.js';
import { createExplainer, type ExplainAnswer } from './explain-answer.js';
import { createRetry, type RetryAnswer } from './retry-failed.js';
import type { PlanReply, PlanRequest } from './plan-socket.js';

/**
 * The daemon's parts made from one config: context, cycle, scheduler, watchers and git poll timers.
 * A config reload that changes sources or watch.* retires them between cycles and makes new ones.
 */
export type DaemonGeneration = {
  ctx: DaemonContext;
  cycle: DaemonCycle;
  scheduler: Scheduler;
  /** Answers `kbsync plan` from this generation's kept index (plan-answer.ts). */
  answer(req: PlanRequest): Promise<PlanReply>;
  /** Explains a path as `kbsync explain` does, from this generation's kept index (explain-answer.ts). */
  explain(path: string): Promise<ExplainAnswer>;
  /** Retries one failed file: its next cycle plans a reprocess (retry-failed.ts). */
  retry(source: string, path: string): Promise<RetryAnswer>;
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
    fileLines?: FileLines;
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
  // The watchers are made once the scheduler is attached; a cycle runs only after that. After each
  // cycle they check that every folder it walked is watched (watch-repair.ts).
  let watching: DaemonWatching | null = null;
  const cycle = createDaemonCycle(ctx, {
    afterCycle: (scope, reasons) => watching?.afterCycle(scope, reasons) ?? Promise.resolve(),
    ...(o.fileLines ? { fileLines: o.fileLines } : {}),
  });
  const scheduler = createScheduler({
    debounceMs: w.debounceMs,
    rescanMs: w.rescanMinutes * 60_000,
    nowMs,
    window: w.schedule === null ? null : cronWindow(w.schedule),
    // A cycle waits for a plan being answered, and a plan is refused while a cycle runs (plan-answer.ts).
    runCycle: (reasons) => cycleAlone(ctx.plans, () => cycle.run(reasons)),
    onIdle: ctx.publish,
    onCycleError: cycle.onError,
  });
  ctx.attach(scheduler);
  const watchers = createDaemonWatching(ctx, o.createWatcher);
  watching = watchers;
  await watchers.start();
  // Folders polled past the inotify limit see a change only at their next sweep: no cached plan then.
  const eventsSeeAll = (): boolean =>
    ctx.snapshot.watches.every((watch) => watch.backend === 'events' && (watch.folders?.polled ?? 0) === 0);
  const answer = createPlanAnswerer({ deps, gate: ctx.plans, keptIndex: cycle.keptIndex, eventsSeeAll, logger });
  const explain = createExplainer({ deps, gate: ctx.plans, keptIndex: cycle.keptIndex, cycleEnded: () => scheduler.current() });
  const retry = createRetry({
    deps,
    gate: ctx.plans,
    keptIndex: cycle.keptIndex,
    cycleEnded: () => scheduler.current(),
    carry: cycle.carry,
    wake: () => scheduler.soon('reprocess'),
  });

  // Git sources: each listed every pollSeconds, and synced by a cycle when its ref moved.
  const gitPoll = createGitPoll(ctx);
  gitPoll.start();

  if (w.schedule !== null) logger.info({ schedule: w.schedule }, 'syncing only in the minutes watch.schedule matches (UTC)');
  const closeWatchers = async (): Promise<void> => {
    gitPoll.stop();
    await watchers.close();
  };
  return {
    ctx,
    cycle,
    scheduler,
    answer,
    explain,
    retry,
    closeWatchers,
    async close() {
      const stopped = scheduler.stop();
      ctx.writing.close();
      await closeWatchers();
      await stopped;
      await cycle.close();
    },
  };
}
