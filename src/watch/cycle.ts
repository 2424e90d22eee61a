import { errorText, isKbsyncError } from '../shared/errors.js';
import { capsOf, runSync, type SyncRun } from '../sync/executor/index.js';
import { isTargetFault } from '../sync/executor/paid-ops.js';
import type { DeltaPass } from '../sync/executor/prepare.js';
import type { TrackedIndex } from '../sync/tracked/tracked-index.js';
import type { BudgetPeriod } from '../sync/types.js';
import { releaseMemory, whileYoungGenerationGrows } from '../shared/release-memory.js';
import type { BurstScope } from './burst.js';
import type { DaemonContext } from './context.js';
import { refreshKeptIndex } from './kept-index.js';
import { createFileLines, type FileLines } from './file-lines.js';
import { createCycleProgress } from './cycle-progress.js';
import { createDeferredFiles, deferredWork, nextForRunCap } from './deferred.js';
import { paceLine } from './pace.js';
import { createRemotePoll } from './remote-poll.js';
import { nextPeriodStartMs, rolloverAtMs } from './rollover.js';
import type { CycleReason } from './scheduler.js';
import { createSettleWait } from './settle.js';
import { createTargetHealth, isTargetError } from './target-health.js';

export type DaemonCycle = {
  /** One sync cycle and its record (the scheduler's runCycle). */
  run(reasons: readonly CycleReason[]): Promise<void>;
  /** A cycle threw: back off and retry, or stop the daemon on an error no retry mends. */
  onError(err: unknown): void;
  /** The error that stopped the daemon, if one did. */
  fatal(): unknown;
  /** The tracked index kept between cycles (being read again, or null during a cycle). */
  keptIndex(): Promise<TrackedIndex | null>;
  /** Stops the remote listing poll (at shutdown, after the last cycle). */
  close(): Promise<void>;
  /** Puts a path in the next cycle's scope (a git source's makes that cycle whole). */
  carry(source: string, path: string): void;
};

/** Longest wait before a failed cycle is tried again (a full disk freed is found within it). */
const MAX_RETRY_MS = 60_000;

/** Reasons a cycle may look at the burst's folders and carried paths only (a kept index permitting). */
const SCOPED_REASONS: ReadonlySet<CycleReason> = new Set(['changes', 'reprocess', 'deferred', 'resume']);

/**
 * The daemon's sync cycles: each an ordinary sync (the same walk, plan, outbox and cost rules) over
 * the tracked index kept from the last cycle, scoped to the folders a burst of events touched when
 * only events asked for it, then recorded in the snapshot, the counters and the log.
 */
export function createDaemonCycle(
  ctx: DaemonContext,
  o: {
    afterCycle?: (scope: BurstScope, reasons: readonly CycleReason[]) => Promise<void>;
    /** The daemon's file lines, kept across config reloads (a skip logged before is not logged again). */
    fileLines?: FileLines;
  } = {},
): DaemonCycle {
  const { deps, snapshot, nowMs, iso, burst } = ctx;
  const { config, logger } = deps;
  const { counters } = snapshot;
  const w = config.watch;
  const logFileLines = o.fileLines ?? createFileLines(logger);
  const settleWait = createSettleWait({
    debounceMs: w.debounceMs,
    roots: new Map(ctx.folderSources.map((s) => [s.name, s.path])),
    ignored: ctx.ignored,
  });
  let failuresInARow = 0;
  // A failed cycle may have left calls in flight in the state (their outcome not written): the next one
  // turns them into unknown outcomes, reconciled against the listing, before it plans.
  let abandonFirst = false;
  let fatal: unknown = null;
  let rollover: { atMs: number; period: BudgetPeriod } | null = null;
  // The tracked index, kept from one cycle to the next (null: read it whole at the next cycle).
  let kept: TrackedIndex | null = null;
  // The whole index read again after a cycle that changed too much of it to update, while nothing waits.
  let keptLoading: Promise<TrackedIndex> | null = null;
  // The next cycle must look at every source: work left over outside the folders (a git source's) is for it.
  let wholeNext = false;
  const keptNow = async (): Promise<TrackedIndex | null> => {
    if (kept === null && keptLoading !== null) kept = await keptLoading.catch(() => null);
    keptLoading = null;
    return kept;
  };
  // Work carried to the next cycle: a folder's path in its scope; another source's makes it whole.
  const carry = (source: string, path: string): void => {
    if (ctx.folderSources.some((s) => s.name === source)) burst.carry(source, path);
    else wholeNext = true;
  };
  // While the target fails, cycles hold their work (the burst and the carried paths keep it) and a
  // free call probes the target with a back-off; the first answer starts a cycle over what waited.
  const health = createTargetHealth(ctx, {
    probe: async () => (await deps.getClient()).getDataset(),
    resume: () => ctx.scheduler.soon('resume'),
    held: burst,
  });
  const remote = createRemotePoll(ctx, {
    kept: keptNow,
    reprocess: (f) => carry(f.source, f.path),
    onFailure: (err) => {
      if (isTargetError(err)) health.down(err, 'reading the remote listing');
    },
  });
  const deferredFiles = createDeferredFiles();
  // What the paid calls of the cycle running moved in the counters as they settled (record adds the rest).
  let spentInCycle = 0;
  const progress = createCycleProgress(ctx);

  const run = async (reasons: readonly CycleReason[]): Promise<void> => {
    if (health.isDown() && !reasons.includes('resume')) {
      // Held: a change's folders stay in the burst, a whole cycle's reason makes the resume whole.
      if (!reasons.every((r) => SCOPED_REASONS.has(r))) wholeNext = true;
      logger.debug({ reasons }, 'the target is unreachable: the cycle waits for it');
      health.count();
      ctx.publish();
      return;
    }
    if (reasons.includes('budget-rollover')) {
      logger.info({ period: rollover?.period }, 'budget period rolled over: starting the deferred work');
      rollover = null;
    }
    // That a cycle runs is published once it waits for something: the status file's write is not on
    // a change's way to the outbox.
    progress.start(reasons);
    setImmediate(ctx.publish);
    // A listing being applied to the kept index ends first.
    await remote.quiet();
    if (abandonFirst) {
      const ops = deps.state.abandonInFlight();
      abandonFirst = false;
      if (ops > 0) logger.info({ ops }, 'calls of the failed cycle left in flight: settled against the remote listing first');
    }
    let sent = false;
    let scoped: boolean;
    try {
      ({ scoped, sent } = await syncAndRecord(reasons));
    } finally {
      progress.end();
      remote.afterCycle(sent);
    }
    failuresInARow = 0;
    // Between cycles the daemon holds only what it tracks and watches: the cycle's walk, plan and report
    // are garbage now. Given back before the snapshot says ready, not whenever V8 gets to it. Not after a
    // cycle of a few folders: little garbage, and a full collection between two changes is not worth it.
    const releasedMs = nowMs();
    if (!scoped && releaseMemory())
      logger.debug({ tookMs: nowMs() - releasedMs, rssBytes: process.memoryUsage.rss() }, 'memory released after the cycle');
  };

  /**
   * One sync and its record. A cycle run only by events looks at the folders they touched (see
   * createBurst); any other (the start, the rescan timer, a git poll, a rollover, a retry) at every
   * source, whole. Either way unchanged files are counted, not planned, and the tracked index is the
   * one kept from the last cycle, brought up to date with what that cycle wrote.
   */
  const syncAndRecord = async (reasons: readonly CycleReason[]): Promise<{ scoped: boolean; sent: boolean }> => {
    const startedMs = nowMs();
    await keptNow();
    const burstScope = burst.take();
    const scoped = kept !== null && burstScope !== null && !wholeNext && reasons.every((r) => SCOPED_REASONS.has(r));
    if (!scoped) wholeNext = false;
    const waitFor = scoped ? settleWait(burstScope, startedMs) : null;
    if (waitFor !== null) {
      // A folder the burst names whole is still being written (see createSettleWait): the burst waits for it.
      burst.untake();
      ctx.scheduler.hint('changes', waitFor);
      logger.debug({ newestChangeAt: iso(waitFor) }, 'a new folder is still being written: its cycle waits for it to settle');
      return { scoped: true, sent: false };
    }
    const delta: DeltaPass = {
      tracked: kept,
      scope: scoped ? burstScope : null,
      onRemoteSettled: remote.settledByCycle,
      holdBack: ctx.writing.holdBack,
      // Calls an earlier cycle left unknown that went through: paid, and counted now.
      onReconciled: (r) => {
        counters.uploads += r.paidFound;
        counters.creditsSpent += r.creditsFound;
      },
    };
    // Until this cycle ends well, nothing is kept: a failed one may have written rows it did not report.
    kept = null;
    // A full cycle over the kept index keeps almost nothing of what it allocates (its walk drops the
    // unchanged files): the young generation may grow for it (run gives the memory back after).
    spentInCycle = 0;
    const sync = (): Promise<SyncRun> =>
      runSync(deps, {
        signal: ctx.cycleAbort.signal,
        delta,
        canary: reasons.includes('resume'),
        onPaidCalls: (n) => {
          progress.planned(n);
          const { requestsPerSecond } = deps.config.upload;
          const pace = paceLine(n, requestsPerSecond);
          if (pace !== null) logger.info({ calls: n, requestsPerSecond, etaSeconds: pace.seconds }, pace.line);
        },
        // Each paid call's line and counters as it settles, not at the end of a long cycle.
        onProgress: (done, total, item, r) => {
          progress.settled(done, total, r.creditsCharged);
          logFileLines.settled(item, r);
          if (r.deferred !== undefined) return;
          if (r.outcome === 'done' && r.remoteId !== null) remote.sent(item.source, item.path, r.remoteId);
          // An unknown outcome is not a failure: the next cycle settles it against the listing (and counts it then).
          if (r.outcome === 'done') counters.uploads++;
          else if (r.outcome === 'failed') counters.failures++;
          counters.creditsSpent += r.creditsCharged;
          spentInCycle += r.creditsCharged;
        },
      });
    remote.cycleStarts();
    let result: SyncRun;
    try {
      result = delta.tracked !== null && !scoped ? await whileYoungGenerationGrows(sync) : await sync();
    } finally {
      await remote.cycleEnds();
    }
    const tookMs = nowMs() - startedMs;
    if (delta.tracked !== null && refreshKeptIndex(delta.tracked, result.items, deps.state)) kept = delta.tracked;
    else {
      keptLoading = deps.state.loadTrackedFilesSoon();
      keptLoading.catch(() => {}); // a damaged state fails the next cycle's own read, where it is reported
    }
    // What a cycle left to do (a failed or unknown call, a file changing while hashed, a stop) is in the
    // next cycle's scope, whatever folders its events name: as when every cycle walked everything.
    for (const item of result.items)
      if (item.outcome !== 'done' && item.action !== 'defer:over-budget' && ctx.folderSources.some((s) => s.name === item.source))
        burst.carry(item.source, item.path);
    record(result, reasons, tookMs, scoped);
    afterTarget(result);
    await o.afterCycle?.(scoped ? burstScope : null, reasons);
    return { scoped, sent: result.totals.uploaded > 0 };
  };

  const record = (result: SyncRun, reasons: readonly CycleReason[], tookMs: number, scoped: boolean): void => {
    counters.cycles++;
    if (reasons.includes('rescan')) counters.rescans++;
    const deferredBy: BudgetPeriod[] = [];
    for (const item of result.items) if (item.deferredBy !== undefined) deferredBy.push(item.deferredBy);
    logFileLines(result.items, scoped);
    // Calls whose answer was lost are not failures: a later cycle settles them against the listing.
    const unknown = result.items.filter((i) => i.outcome === 'unknown').length;
    // The paid calls moved the counters as they settled; the rest (reindex, intelligence writes) now.
    counters.creditsSpent += result.totals.creditsSpent - spentInCycle;
    const { totals } = result;
    logger.info(
      {
        reasons,
        runId: result.runId,
        scope: scoped ? 'folders' : 'all',
        tookMs,
        uploaded: totals.uploaded,
        unchanged: totals.unchanged,
        renamed: totals.renamed,
        skipped: totals.skipped,
        deferred: totals.deferred,
        failed: totals.failed - unknown,
        unknown,
        creditsSpent: totals.creditsSpent,
        reindex: result.reindex.outcome,
      },
      'sync cycle done',
    );
    for (const note of result.notes) logger.info({ note }, 'sync note');
    if (result.stop !== null && result.stop.by !== 'shutdown')
      logger.warn({ by: result.stop.by, code: result.stop.code, message: result.stop.message }, 'the sync stopped spending');
    recordDeferred(result, scoped);
    const next = rolloverAtMs(deferredBy, nowMs());
    if (next !== null && (rollover === null || rollover.atMs !== next.atMs)) {
      rollover = next;
      ctx.scheduler.at(next.atMs, 'budget-rollover');
      logger.info(
        { period: next.period, at: iso(next.atMs), files: deferredBy.length },
        'work deferred by the budget: it starts when the period opens',
      );
    }
    // The embedded service starts with the first upload: started now, while nothing waits, it is not
    // part of the first change's way to the outbox.
    if (!snapshot.ready && config.target.kind === 'embedded') deps.getClient().catch(() => {});
    snapshot.ready = true;
    // A cycle the target stopped did not succeed: its changes wait.
    if (!isTargetFault(result.stop)) snapshot.lastSuccessAt = iso();
    snapshot.lastSync = {
      at: iso(),
      reasons: [...reasons],
      status: result.stop !== null || totals.deferred > 0 ? 'stopped' : 'done',
      uploaded: totals.uploaded,
      deferred: totals.deferred,
      failed: totals.failed - unknown,
      unknown,
      creditsSpent: totals.creditsSpent,
    };
  };

  /** What the cycle learnt of the target: it failed (hold and probe), it left outcomes unknown (settle them later), or all is well. */
  const afterTarget = (result: SyncRun): void => {
    const { stop } = result;
    if (stop !== null && isTargetFault(stop)) health.down(new Error(stop.message), 'sending');
    else if (result.items.some((i) => i.outcome === 'unknown')) {
      health.fine();
      health.settleLater();
    } else health.fine();
    health.count();
  };

  /** Work deferred by the per-run cap goes on in a cycle of its own, right after this one (see nextForRunCap). */
  const recordDeferred = (result: SyncRun, scoped: boolean): void => {
    const runCap = nextForRunCap(result.items, capsOf(deps.config), result.totals.uploaded > 0);
    if (runCap.again && result.stop === null) {
      for (const item of result.items) if (item.deferredBy === 'run') carry(item.source, item.path);
      // A second apart: the new cycle's queue starts a rate window of its own.
      ctx.scheduler.at(nowMs() + 1000, 'deferred');
      logger.info({ files: runCap.files }, 'work deferred by budget.maxCreditsPerRun: the next cycle sends it');
    }
    if (runCap.neverFit.length > 0)
      logger.warn(
        { files: runCap.neverFit.length, cap: deps.config.budget.maxCreditsPerRun, paths: runCap.neverFit.slice(0, 5).map((i) => i.path) },
        'files that cost more than budget.maxCreditsPerRun alone: no cycle sends them until the cap is raised',
      );
    const opensAt = (period: BudgetPeriod): string | null => {
      const at = nextPeriodStartMs(period, nowMs());
      return at === null ? null : iso(at);
    };
    snapshot.deferred = deferredWork(deferredFiles(result.items, scoped), {
      again: runCap.again && result.stop === null,
      neverFit: runCap.neverFit.length,
      periodOpensAt: opensAt,
    });
  };

  const onError = (err: unknown): void => {
    progress.end();
    counters.cyclesFailed++;
    failuresInARow++;
    snapshot.lastError = { at: iso(), message: errorText(err) };
    if (isKbsyncError(err, 'state_unavailable')) {
      // The PostgreSQL session is gone, and with it this runner's source locks: another runner may hold
      // them now, so no retry here. The daemon stops; its supervisor starts it again (a new session).
      fatal ??= err;
      logger.error({ err: errorText(err) }, 'the state cannot be reached: stopping (restart kbsync watch, e.g. by its supervisor)');
      ctx.lifetime.abort();
      ctx.publish();
      return;
    }
    // The next cycle walks everything (the burst this one took is gone with it), from the durable state.
    wholeNext = true;
    abandonFirst = true;
    health.count();
    if (isTargetError(err)) {
      // The target failed, not the cycle: the probe's back-off decides when it runs again.
      logger.error({ err: errorText(err) }, 'sync cycle failed: the target did not answer');
      health.down(err, 'sync cycle');
      return;
    }
    // Never an exit: the next try comes after a back-off (5 s, 10 s... at most a minute), or a change.
    const waitMs = Math.min(5000 * 2 ** (failuresInARow - 1), MAX_RETRY_MS, w.rescanMinutes * 60_000);
    counters.retries++;
    logger.error({ err: errorText(err), retryInMs: waitMs }, 'sync cycle failed; trying again later');
    if (!ctx.lifetime.signal.aborted) ctx.scheduler.at(nowMs() + waitMs, 'retry');
    ctx.publish();
  };

  const keptIndex = (): Promise<TrackedIndex | null> =>
    kept !== null ? Promise.resolve(kept) : (keptLoading?.catch(() => null) ?? Promise.resolve(null));
  const close = async (): Promise<void> => {
    health.close();
    await remote.close();
  };
  return { run, onError, fatal: () => fatal, keptIndex, close, carry };
}
