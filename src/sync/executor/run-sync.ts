import { dirname } from 'node:path';
import { errorText } from '../../shared/errors.js';
import { localStatePath } from '../../shared/state-url.js';
import { convertedDir } from '../sources/converted.js';
import { recordConverterVersions } from './converter-versions.js';
import { costOf } from '../../shared/plans.js';
import { processingErrorClass } from '../../shared/processing-errors.js';
import { admissionOrder, bucketOf, summarize } from '../planner/index.js';
import { overBudgetReason, permanentFailureReason } from '../planner/reasons.js';
import type { StateStore } from '../state/index.js';
import type { Observation, PlanItem, RemoteStatus, RunItem, RunOutcome, RunResult, SyncPlan } from '../types.js';
import { runPaidTasks, type PaidResult, type PaidTask, type StopReason } from './paid-ops.js';
import { runItemOf } from './run-item.js';
import { paidQueue } from './paid-queue.js';
import { waitForProcessing } from './poll.js';
import type { UnlistedRows } from '../planner/unlisted.js';
import { capsOf, preparePlan, type DeltaPass, type SyncDeps } from './prepare.js';
import { observedLookup } from './observed-lookup.js';
import { reprocessTask, taskFor } from './paid-tasks.js';
import { recordFreeDecisions } from './record-free.js';
import { prepareWrites, sendWrites, type EntryProgress } from '../intelligence/run-writes.js';

export type SyncOptions = {
  /** Wait for remote processing, then reprocess failures (within budget and maxReprocessAttempts). */
  wait?: { timeoutMs: number; intervalMs?: number; nowMs?: () => number };
  /** Called once before the paid calls start, with how many there are; then after each settles: done so far, total, how it ended. */
  onPaidCalls?: (total: number) => void;
  onProgress?: (done: number, total: number, item: PlanItem, result: PaidResult) => void;
  /** Called after each intelligence write settles: entries written (or failed) so far, of those to write, and the write's entries. */
  onEntryProgress?: EntryProgress;
  /** Called as files are hashed: so far, of those found to hash so far. */
  onHashProgress?: (done: number, total: number) => void;
  /** Called after each listing `--wait` polls: files processed or failed, of those it waits for. */
  onWaitProgress?: (settled: number, total: number) => void;
  sleep?: (ms: number) => Promise<void>;
  /** Aborted at a shutdown (`kbsync watch`): paid calls in flight finish, none other starts, the reindex is not asked for. */
  signal?: AbortSignal;
  /** The first paid call goes alone (`kbsync watch` resuming after its target failed): see runPaidTasks. */
  canary?: boolean;
  /**
   * A delta pass (`kbsync watch`, see DeltaPass): the run's items are then only the files that may
   * have changed (unchanged ones are counted in totals.unchanged). Its `tracked` is set to the index the
   * run planned from, which the run's own writes then make stale: see refreshTracked.
   */
  delta?: DeltaPass;
  /** Count the unchanged files instead of listing them as items (preparePlan's countUnchanged): SyncRun.unlisted holds their rows. */
  countUnchanged?: boolean;
};

/** A finished run: the report, why it stopped spending (if it did), and what was done before planning. */
export type SyncRun = RunResult & {
  runId: number;
  stop: StopReason | null;
  notes: string[];
  plan: SyncPlan;
  /** Files sent in this run that `--wait` saw still queued or processing when its timeout passed (0 without --wait). */
  stillProcessing: number;
  /** The unchanged files counted instead of listed (SyncOptions.countUnchanged), by row; else null. */
  unlisted: UnlistedRows | null;
};

/**
 * One sync: plan, record the free decisions, make the admitted paid calls (each durable before it is
 * made), optionally wait for processing and reprocess failures, reindex after a bulk change, and record
 * the run. Per-file failures are values in the result; only what the run cannot continue past throws.
 */
export async function runSync(deps: SyncDeps, options: SyncOptions = {}): Promise<SyncRun> {
  const { state, config } = deps;
  const now = deps.now ?? (() => new Date());
  const startedAt = now().toISOString();
  const runId = state.startRun('sync');
  try {
    const prepared = await preparePlan(deps, runId, {
      ...(options.onHashProgress !== undefined ? { onHashProgress: options.onHashProgress } : {}),
      ...(options.delta !== undefined ? { delta: options.delta } : {}),
      ...(options.countUnchanged === true ? { countUnchanged: true } : {}),
    });
    if (options.delta !== undefined) options.delta.tracked = prepared.tracked;
    const { plan } = prepared;
    const observed = observedLookup(prepared.observation.files, prepared.observation.inPathOrder === true);
    recordFreeDecisions(state, plan.items, observed, prepared.tracked);

    const outcomes = new Map<PlanItem, PaidResult>();
    // In the planner's admission order (smallest first): if the budget tightens at reservation, most files still fit.
    const paid = admissionOrder(plan.items.filter((i) => (i.action === 'upload' || i.action === 'reprocess') && i.credits > 0));
    let stop: StopReason | null = null;
    const paidOpts: PaidOpts = {
      state,
      runId,
      caps: capsOf(config),
      queue: paidQueue(config.upload.concurrency, config.upload.requestsPerSecond),
      maxRetryAfterMs: config.upload.maxRetryAfterSeconds * 1000,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.canary === true ? { canary: true } : {}),
    };
    // An agent that may not write stops the run (or is switched, with ensureSelfLearning) before any paid call.
    const writes = await prepareWrites(plan.intelligence, prepared.entryContents, deps);
    if (paid.length > 0) {
      const client = await deps.getClient();
      options.onPaidCalls?.(paid.length);
      let done = 0;
      const result = await runPaidTasks(
        paid.map((item) => taskFor(item, observed, client, convertedDir(dirname(localStatePath(config))))),
        {
          ...paidOpts,
          onSettled: (index, r) => {
            outcomes.set(paid[index] as PlanItem, r);
            options.onProgress?.(++done, paid.length, paid[index] as PlanItem, r);
          },
        },
      );
      stop = result.stop;
    }

    // The entries after the files, through the same queue, caps and outbox.
    let intelligence = plan.intelligence;
    if (writes !== null) ({ intelligence, stop } = await sendWrites(writes, paidOpts, stop, options.onEntryProgress));

    let waited: WaitOutcome | null = null;
    if (options.wait !== undefined && stop === null) {
      waited = await waitAndReprocess(deps, options, paidOpts, outcomes);
      stop = waited.stop;
    }

    const changedFiles = [...outcomes.values()].filter((r) => r.outcome === 'done').length;
    const reindex = await maybeReindex(deps, plan, changedFiles, stop, paidOpts);
    stop ??= reindex.stop;

    const items: RunItem[] = plan.items.map((item) =>
      runItemOf(item, outcomes.get(item), waited?.pending.get(item), waited?.reprocessed.get(item)),
    );
    markDuplicatesOfUnsent(items);
    const totals = summarize(items, { credits: plan.reindex.credits, creditsCharged: reindex.result.creditsCharged });
    totals.unchanged += plan.unchangedNotListed ?? 0;
    if (intelligence !== undefined) {
      totals.creditsPlanned += intelligence.totals.creditsPlanned;
      totals.creditsSpent += intelligence.totals.creditsSpent;
      totals.deferred += intelligence.totals.deferred;
      totals.failed += intelligence.totals.failed;
    }
    const notes = [...prepared.notes, ...(writes?.notes ?? [])];
    const stillProcessing = waited?.timedOutAfterMs != null ? waited.pending.size : 0;
    if (waited !== null && waited.timedOutAfterMs !== null && stillProcessing > 0) {
      notes.push(
        `--wait gave up after ${formatSeconds(waited.timedOutAfterMs)}: ${stillProcessing} ${stillProcessing === 1 ? 'file is' : 'files are'} still processing (\`kbsync status\` shows them later; a failure is reprocessed by the next sync)`,
      );
    }
    const run: SyncRun = {
      kind: 'run',
      runId,
      startedAt,
      finishedAt: now().toISOString(),
      items,
      totals,
      stop,
      notes,
      plan,
      stillProcessing,
      unlisted: prepared.unlisted,
      ...(intelligence !== undefined ? { intelligence } : {}),
      reindex: {
        ...plan.reindex,
        outcome: reindex.result.outcome,
        creditsCharged: reindex.result.creditsCharged,
        error: reindex.result.error,
      },
    };
    recordSyncedCommits(state, prepared.observation, items);
    recordConverterVersions(state, items, stop);
    const workLeft = totals.deferred > 0;
    const notConverted = notConvertedCounts(items);
    state.finishRun(runId, stop !== null || workLeft ? 'stopped' : 'done', {
      totals,
      stop,
      ...(notConverted === null ? {} : { notConverted }),
    });
    return run;
  } catch (err) {
    state.finishRun(runId, 'failed', { error: errorText(err) });
    throw err;
  }
}

/** How many documents the run could not convert, by why (none: null). */
function notConvertedCounts(items: readonly RunItem[]): Record<string, number> | null {
  const counts: Record<string, number> = {};
  for (const i of items)
    if (i.action === 'skip:encrypted' || i.action === 'skip:no-text' || i.action === 'skip:convert-failed')
      counts[i.action] = (counts[i.action] ?? 0) + 1;
  return Object.keys(counts).length === 0 ? null : counts;
}

type PaidOpts = Omit<Parameters<typeof runPaidTasks>[1], 'onSettled'>;

/** What `--wait` saw: files still not processed when it gave up, and how many reprocesses it sent per item. */
type WaitOutcome = {
  stop: StopReason | null;
  pending: Map<PlanItem, RemoteStatus>;
  timedOutAfterMs: number | null;
  reprocessed: Map<PlanItem, number>;
};

/**
 * Waits for the files this run sent to finish processing, within one deadline; files that failed are
 * reprocessed (each up to upload.maxReprocessAttempts times in all, admitted against the budget like any
 * paid call) and waited for again, unless the service's error says the same file would fail again
 * (docs/api.md; an error without a known code, as the hosted service writes, may be transient). The reprocess charges are added to their items; a file still failed
 * at the end is reported failed with the service's reason (and why it was not reprocessed again); a file
 * still queued or processing at the deadline is returned in `pending`.
 */
async function waitAndReprocess(
  deps: SyncDeps,
  options: SyncOptions,
  paidOpts: PaidOpts,
  outcomes: Map<PlanItem, PaidResult>,
): Promise<WaitOutcome> {
  const wait = options.wait as NonNullable<SyncOptions['wait']>;
  const nowMs = wait.nowMs ?? Date.now;
  const deadline = nowMs() + wait.timeoutMs;
  const pending = new Map<PlanItem, RemoteStatus>();
  const reprocessed = new Map<PlanItem, number>();
  const sent = [...outcomes].filter(([, r]) => r.outcome === 'done' && r.remoteId !== null);
  if (sent.length === 0) return { stop: null, pending, timedOutAfterMs: null, reprocessed };
  const client = await deps.getClient();
  const pollOpts = {
    intervalMs: wait.intervalMs ?? 500,
    nowMs,
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.onWaitProgress ? { onPoll: options.onWaitProgress } : {}),
  };
  const last = new Map<string, { status: RemoteStatus; error: string | undefined }>();
  const notRetried = new Map<PlanItem, string>();
  let timedOut = false;
  const finish = (stop: StopReason | null): WaitOutcome => {
    for (const [item, r] of sent) {
      const seen = last.get(r.remoteId as string);
      if (seen === undefined || seen.status === 'processed') continue;
      if (seen.status !== 'failed') {
        pending.set(item, seen.status);
        continue;
      }
      const current = outcomes.get(item) as PaidResult;
      const why = notRetried.get(item);
      const error =
        seen.error !== undefined && processingErrorClass(seen.error) === 'permanent'
          ? permanentFailureReason(seen.error)
          : `remote processing failed: ${seen.error ?? 'no reason given'}${why === undefined ? '' : `; ${why}`}`;
      outcomes.set(item, { ...current, outcome: 'failed', error });
    }
    return { stop, pending, timedOutAfterMs: timedOut ? wait.timeoutMs : null, reprocessed };
  };
  let ids = sent.map(([, r]) => r.remoteId as string);
  for (;;) {
    const polled = await waitForProcessing(client, deps.state, ids, { ...pollOpts, timeoutMs: Math.max(0, deadline - nowMs()) });
    for (const [id, status] of polled.statuses) last.set(id, { status, error: polled.errors.get(id) });
    timedOut ||= polled.timedOut;
    const retry = sent.filter(([item, r]) => {
      if (polled.statuses.get(r.remoteId as string) !== 'failed') return false;
      if (processingErrorClass(polled.errors.get(r.remoteId as string)) === 'permanent') return false;
      const tracked = deps.state.getTracked(item.source, item.path);
      return tracked !== null && tracked.reprocessAttempts < deps.config.upload.maxReprocessAttempts;
    });
    // Past the deadline nothing new is started: a reprocess would not be waited for.
    if (retry.length === 0 || nowMs() >= deadline) return finish(null);
    const tasks = retry.map(([item, r]) =>
      reprocessTask(item.source, item.path, r.remoteId as string, 'remote processing failed; reprocessing after --wait', client),
    );
    const result = await runPaidTasks(tasks, paidOpts);
    result.results.forEach((r, i) => {
      const item = (retry[i] as [PlanItem, PaidResult])[0];
      const current = outcomes.get(item) as PaidResult;
      outcomes.set(item, { ...current, creditsCharged: current.creditsCharged + r.creditsCharged });
      const d = r.deferred;
      if (d === undefined) reprocessed.set(item, (reprocessed.get(item) ?? 0) + 1);
      if (d?.by === 'budget')
        notRetried.set(item, `reprocess not sent: ${overBudgetReason(d.period, d.used, costOf({ kind: 'reprocess' }), d.cap, 0)}`);
      else if (d?.by === 'unreachable') notRetried.set(item, `reprocess not done: the target did not answer (${d.message})`);
      else if (d?.by === 'refused' || d?.by === 'stopped') notRetried.set(item, `reprocess not done: the run stopped spending (${d.code})`);
      else if (r.outcome === 'failed') notRetried.set(item, `reprocess failed: ${r.error ?? 'no reason given'}`);
    });
    if (result.stop !== null) return finish(result.stop);
    ids = result.results.filter((r) => r.outcome === 'done').map((r) => r.remoteId as string);
    if (ids.length === 0) return finish(null);
  }
}

type ReindexResult = { result: { outcome: RunOutcome; creditsCharged: number; error: string | null }; stop: StopReason | null };

/** One reindex after a bulk change, when the plan wants it, the tier allows it and this run changed enough files. */
async function maybeReindex(
  deps: SyncDeps,
  plan: SyncPlan,
  changedFiles: number,
  stop: StopReason | null,
  paidOpts: PaidOpts,
): Promise<ReindexResult> {
  const notRun: ReindexResult = { result: { outcome: 'not-run', creditsCharged: 0, error: null }, stop: null };
  if (!plan.reindex.wanted || !plan.reindex.allowed || stop !== null || changedFiles < plan.reindex.minChangedFiles) return notRun;
  const client = await deps.getClient();
  const task: PaidTask = {
    op: { kind: 'reindex', credits: costOf({ kind: 'reindex' }), reason: `${changedFiles} files changed` },
    perform: async (op) => {
      await client.reindex({ idempotencyKey: op.idempotencyKey });
      return { outcome: 'done', creditsCharged: null };
    },
  };
  const { results, stop: reindexStop } = await runPaidTasks([task], paidOpts);
  const r = results[0] as PaidResult;
  return { result: { outcome: r.outcome, creditsCharged: r.creditsCharged, error: r.error }, stop: reindexStop };
}

/**
 * A duplicate of content this run meant to upload relies on that upload: when it did not happen (over
 * budget at reservation, changed since hashed, stopped, failed, unknown), the duplicate is not in the
 * dataset either. Its row was recorded without a remote copy, so the next run looks at it again; the
 * report says so instead of "uploaded in this run".
 */
function markDuplicatesOfUnsent(items: RunItem[]): void {
  const unsent = new Map<string, RunItem>();
  for (const item of items) {
    if (
      item.sha256 !== null &&
      item.outcome !== 'done' &&
      (item.action === 'upload' || item.deferredAction === 'upload' || item.action === 'defer:changing')
    )
      unsent.set(item.sha256, item);
  }
  if (unsent.size === 0) return;
  for (const item of items) {
    if (item.action !== 'skip:duplicate-content' || item.duplicateOf?.inThisRun !== true || item.sha256 === null) continue;
    const primary = unsent.get(item.sha256);
    if (primary === undefined) continue;
    item.outcome = 'not-run';
    item.reason = `same content as ${primary.remoteName}, whose upload did not happen in this run (${primary.outcome}); looked at again next run`;
  }
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** A git source's commit is the next `git diff`'s base only when nothing of it is left to do (failed, unknown, deferred). */
function recordSyncedCommits(state: StateStore, observation: Observation, items: readonly RunItem[]): void {
  for (const source of observation.sources) {
    if (source.kind !== 'git' || source.commit === null || source.scope === null) continue;
    const leftOver = items.some((i) => i.source === source.name && (i.outcome !== 'done' || bucketOf(i) === 'failed'));
    if (!leftOver) state.setLastSyncedCommit(source.name, source.commit, source.scope);
  }
}
