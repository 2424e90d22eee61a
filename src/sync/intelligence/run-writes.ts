import type { KnowledgeClient } from '../../client/index.js';
import type { ResolvedConfig } from '../../config/schema.js';
import { runPaidTasks, type PaidRunOptions, type PaidTask, type StopReason } from '../executor/paid-ops.js';
import type { StateStore } from '../state/index.js';
import type { EntryItem, IntelPlan } from '../types.js';
import { cancelStaleWrites, ensureWritable, entryOutcomes, entryTasks, type EntryContents } from './execute.js';

/** A run's intelligence writes, ready to send: the paid tasks, the entries each carries, and notes for people. */
export type PreparedWrites = { plan: IntelPlan; tasks: PaidTask[]; groups: EntryItem[][]; notes: string[] };

/**
 * Before the run's first paid call: the writes of the plan's entries (batches or single), the queued
 * writes it no longer makes cancelled, and each writing agent checked (or switched, with
 * ensureSelfLearning): one that may not write stops the run here, before anything is spent.
 */
export async function prepareWrites(
  plan: IntelPlan | undefined,
  contents: EntryContents,
  deps: { config: ResolvedConfig; state: StateStore; getClient: () => Promise<KnowledgeClient> },
): Promise<PreparedWrites | null> {
  if (plan === undefined) return null;
  const { tasks, groups } = entryTasks(plan, contents, deps.getClient, deps.state);
  cancelStaleWrites(deps.state, tasks);
  const notes = tasks.length === 0 ? [] : await ensureWritable(await deps.getClient(), deps.config, plan);
  return { plan, tasks, groups, notes };
}

/** Called as each write settles: entries whose write settled so far, of the entries to write, and the write's entries. */
export type EntryProgress = (done: number, total: number, entries: readonly EntryItem[]) => void;

/**
 * Sends the writes through the run's queue, caps and outbox (after the files), unless the run already
 * stopped spending; returns the entries with how each ended, and the run's stop. `onProgress` counts
 * entries, not calls (a batch of 50 moves it by 50).
 */
export async function sendWrites(
  writes: PreparedWrites,
  paidOpts: Omit<PaidRunOptions, 'onSettled'>,
  stop: StopReason | null,
  onProgress?: EntryProgress,
): Promise<{ intelligence: IntelPlan; stop: StopReason | null }> {
  if (writes.tasks.length === 0) return { intelligence: entryOutcomes(writes.plan, [], [], [], stop), stop };
  if (stop !== null) return { intelligence: entryOutcomes(writes.plan, writes.groups, writes.tasks, null, stop), stop };
  const total = writes.groups.reduce((n, g) => n + g.length, 0);
  let done = 0;
  const onSettled =
    onProgress === undefined
      ? undefined
      : (index: number): void => {
          const group = writes.groups[index] ?? [];
          done += group.length;
          onProgress(done, total, group);
        };
  const r = await runPaidTasks(writes.tasks, onSettled === undefined ? paidOpts : { ...paidOpts, onSettled });
  return { intelligence: entryOutcomes(writes.plan, writes.groups, writes.tasks, r.results, r.stop), stop: r.stop };
}
