import { isApiError } from '../../client/errors.js';
import type { IntelligenceInput, IntelligenceWrite, KnowledgeClient } from '../../client/index.js';
import type { ResolvedConfig } from '../../config/schema.js';
import { KbsyncError } from '../../shared/errors.js';
import { sha256Hex } from '../../shared/sha256.js';
import type { PaidResult, PaidTask, StopReason } from '../executor/paid-ops.js';
import type { IntelPayload, OutboxOp, StateStore } from '../state/index.js';
import type { EntryItem, IntelPlan } from '../types.js';
import { entryTotals, MAX_BATCH_ENTRIES } from './plan-entries.js';
import type { EntryCandidate } from './read.js';

/** Entries' content by `source + "\0" + path` (the plan's items carry no content). */
export type EntryContents = ReadonlyMap<string, EntryCandidate>;

/** The key of an entry in EntryContents. */
export const entryKey = (source: string, path: string): string => `${source}\0${path}`;

/**
 * Makes sure each agent with entries to write may write to the dataset: its attachment must be
 * `self_learning`. One that is `read_only` (or not attached) stops the run before any paid call, with
 * what to do, unless a source of that agent says `ensureSelfLearning: true`: then kbsync switches it
 * through the agent-dataset API (free; the service emits `dataset.mode_changed`). Returns notes.
 */
export async function ensureWritable(client: KnowledgeClient, config: ResolvedConfig, plan: IntelPlan): Promise<string[]> {
  const agents = new Map<string, { sources: string[]; ensure: boolean }>();
  for (const item of plan.items) {
    if (item.action !== 'write') continue;
    const source = config.sources.find((s) => s.name === item.source);
    const a = agents.get(item.agentId) ?? { sources: [], ensure: false };
    if (!a.sources.includes(item.source)) a.sources.push(item.source);
    a.ensure ||= source?.ensureSelfLearning === true;
    agents.set(item.agentId, a);
  }
  const notes: string[] = [];
  for (const [agentId, a] of agents) {
    const named = `agent ${agentId} (source ${a.sources.join(', ')})`;
    let attachments: Awaited<ReturnType<KnowledgeClient['listAgentDatasets']>>;
    try {
      attachments = await client.listAgentDatasets(agentId);
    } catch (err) {
      if (isApiError(err) && err.code === 'not_found') {
        throw new KbsyncError('not_found', `${named}: the service knows no such agent in this dataset; check the source's agent id`, {
          cause: err,
        });
      }
      throw err;
    }
    let datasetId = config.target.datasetId ?? (attachments.length === 1 ? (attachments[0]?.id ?? null) : null);
    const mine = datasetId === null ? undefined : attachments.find((d) => d.id === datasetId);
    if (mine?.mode === 'self_learning') continue;
    const was = mine === undefined ? 'not attached to this dataset' : `attached to dataset ${mine.id} in ${mine.mode} mode`;
    if (!a.ensure) {
      throw new KbsyncError(
        'mode_forbidden',
        `${named} is ${was}: intelligence writes need self_learning. Set \`ensureSelfLearning: true\` on the source to let kbsync switch it, or switch it yourself (PATCH /api/v2/ext/agents/${agentId}/datasets/{dataset_id} {"mode":"self_learning"}); nothing was sent`,
      );
    }
    datasetId ??= (await client.listDatasets()).datasets[0]?.id ?? null;
    if (datasetId === null) throw new KbsyncError('not_found', `${named}: the key sees no dataset to attach the agent to`);
    if (mine === undefined) await client.attachDataset(agentId, { datasetId, mode: 'self_learning' });
    else await client.setDatasetMode(agentId, datasetId, 'self_learning');
    notes.push(`${named}: switched from ${mine?.mode ?? 'not attached'} to self_learning on dataset ${datasetId} (ensureSelfLearning)`);
  }
  return notes;
}

/**
 * Cancels the queued intelligence writes this run does not make: a write sent again after an unknown
 * outcome the listing did not confirm waits in the outbox as pending, and when its entries are now
 * unchanged, edited or regrouped, that request is never sent again (nothing was charged for it).
 */
export function cancelStaleWrites(state: StateStore, tasks: readonly PaidTask[]): number {
  const current = new Set(tasks.map((t) => ('digest' in t.op ? t.op.digest : '')));
  let cancelled = 0;
  for (const op of state.pendingOps()) {
    if ((op.kind !== 'intelligence' && op.kind !== 'intelligence_batch') || current.has(op.sha256 ?? '')) continue;
    state.cancelOp(op.id, 'superseded: its entries are planned otherwise now');
    cancelled++;
  }
  return cancelled;
}

/** The paid writes of a plan's entries: per agent, batches of up to 50 (Advanced tier) or one entry a call. */
export function entryTasks(
  plan: IntelPlan,
  contents: EntryContents,
  getClient: () => Promise<KnowledgeClient>,
  state: StateStore,
): { tasks: PaidTask[]; groups: EntryItem[][] } {
  const byAgent = new Map<string, EntryItem[]>();
  for (const item of plan.items) {
    if (item.action !== 'write' || item.credits === 0) continue;
    const list = byAgent.get(item.agentId) ?? [];
    list.push(item);
    byAgent.set(item.agentId, list);
  }
  const size = plan.mode === 'batch' ? MAX_BATCH_ENTRIES : 1;
  const groups: EntryItem[][] = [];
  for (const list of byAgent.values()) for (let i = 0; i < list.length; i += size) groups.push(list.slice(i, i + size));
  const tasks = groups.map((group) => writeTask(group, plan.mode, contents, getClient, state));
  return { tasks, groups };
}

function inputOf(c: EntryCandidate): IntelligenceInput {
  const input: IntelligenceInput = { content: c.content };
  if (c.title !== null) input.title = c.title;
  if (c.metadata !== undefined) input.metadata = c.metadata;
  return input;
}

/** One write call: its outbox op (agent, each entry's hash and place), the call, and the entries it records when done. */
function writeTask(
  group: EntryItem[],
  mode: IntelPlan['mode'],
  contents: EntryContents,
  getClient: () => Promise<KnowledgeClient>,
  state: StateStore,
): PaidTask & {
  answers: IntelligenceWrite[] | null;
} {
  const first = group[0] as EntryItem;
  const agentId = first.agentId;
  const inputs = group.map((item) => inputOf(contents.get(entryKey(item.source, item.path)) as EntryCandidate));
  const payload: IntelPayload = {
    agentId,
    entries: group.map((item) => ({ sha256: item.sha256 as string, source: item.source, path: item.path, title: item.title })),
  };
  const kind = mode === 'batch' ? 'intelligence_batch' : 'intelligence';
  const task: PaidTask & { answers: IntelligenceWrite[] | null } = {
    answers: null,
    op: {
      kind,
      source: first.source,
      path: first.path,
      // The request itself: the same digest is the same body, so a retry may reuse the idempotency key.
      digest: sha256Hex(JSON.stringify({ agentId, inputs })),
      payload,
      credits: group.reduce((n, item) => n + item.credits, 0),
      reason: kind === 'intelligence' ? first.reason : `${group.length} entries of agent ${agentId}`,
    },
    perform: async (op: OutboxOp) => {
      const client = await getClient();
      if (kind === 'intelligence') {
        const r = await client.writeIntelligence({ agentId, ...(inputs[0] as IntelligenceInput) }, { idempotencyKey: op.idempotencyKey });
        task.answers = [r];
        return { outcome: 'done', creditsCharged: r.creditsCharged, remoteId: r.id };
      }
      const r = await client.writeIntelligenceBatch({ agentId, entries: inputs }, { idempotencyKey: op.idempotencyKey });
      task.answers = r.results;
      return { outcome: 'done', creditsCharged: r.creditsCharged, remoteId: r.results[0]?.id ?? null };
    },
    recordDone: () => {
      const answers = task.answers ?? [];
      state.recordEntries(
        payload.entries.map((e, i) => ({
          ...e,
          agentId,
          remoteId: answers[i]?.id ?? '',
          status: answers[i]?.status ?? 'pending',
        })),
      );
    },
  };
  return task;
}

/**
 * The run's view of the entries: each write with how its call ended (and, in a batch, what the service
 * charged for it: 0 when it turned out to be a duplicate), duplicates in this run following their first,
 * and the rest as planned. `stop`: the run stopped spending before the entries were reached.
 */
export function entryOutcomes(
  plan: IntelPlan,
  groups: readonly EntryItem[][],
  tasks: readonly PaidTask[],
  results: readonly PaidResult[] | null,
  stop: StopReason | null,
): IntelPlan {
  const ended = new Map<EntryItem, Pick<EntryItem, 'outcome' | 'creditsCharged' | 'error' | 'remoteId' | 'reason'>>();
  groups.forEach((group, g) => {
    const r = results?.[g];
    const answers = (tasks[g] as PaidTask & { answers: IntelligenceWrite[] | null }).answers;
    group.forEach((item, i) => {
      if (r === undefined) {
        ended.set(item, {
          outcome: 'not-run',
          creditsCharged: 0,
          error: null,
          remoteId: null,
          reason: `${item.reason}; not sent: the run stopped spending (${stop?.code ?? 'stopped'})`,
        });
        return;
      }
      const answer = answers?.[i];
      const reason =
        r.deferred === undefined
          ? answer?.duplicate === true
            ? `${item.reason}; the service already held it (duplicate, nothing charged)`
            : item.reason
          : `${item.reason}; not sent (${r.deferred.by === 'budget' ? `over the ${r.deferred.period} cap at reservation` : 'deferred'}): written by a later run`;
      ended.set(item, {
        outcome: r.outcome,
        creditsCharged: r.outcome === 'done' ? (answer?.creditsCharged ?? (group.length === 1 ? r.creditsCharged : 0)) : 0,
        error: r.error,
        remoteId: answer?.id ?? null,
        reason,
      });
    });
  });
  const firstBySha = new Map<string, EntryItem>();
  const done = new Map<EntryItem, EntryItem>();
  for (const [item, e] of ended) {
    const out = { ...item, ...e };
    done.set(item, out);
    if (item.sha256 !== null) firstBySha.set(item.sha256, out);
  }
  const items = plan.items.map((item) => {
    const out = done.get(item);
    if (out !== undefined) return out;
    const first = item.sha256 === null ? undefined : firstBySha.get(item.sha256);
    if (item.action === 'skip:duplicate-content' && first !== undefined && first.outcome !== 'done') {
      return {
        ...item,
        outcome: 'not-run' as const,
        creditsCharged: 0,
        error: null,
        reason: `${item.reason}; that write did not happen in this run: looked at again next run`,
      };
    }
    const outcome =
      item.action === 'defer:over-budget' ? ('not-run' as const) : item.action === 'invalid' ? ('failed' as const) : ('done' as const);
    return {
      ...item,
      outcome,
      creditsCharged: 0,
      error: item.action === 'invalid' ? item.reason : null,
      remoteId: item.remoteId ?? first?.remoteId ?? null,
    };
  });
  return { ...plan, items, totals: entryTotals(items) };
}
