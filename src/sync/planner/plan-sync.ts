import type { ObservedFile, PlanInput, PlanItem, SkippedPath, SyncPlan, TrackedFile } from '../types.js';
import { admissionOrder, applyAdmission } from './budget.js';
import { resolveCandidates } from './candidates.js';
import { buildContentIndex } from './content-index.js';
import { contextOf, type Candidate } from './context.js';
import { deletedItem } from './deleted.js';
import { compareByPath, isStrictlyInPathOrder, trackedKey } from '../tracked/keys.js';
import { orderItems } from './order.js';
import { classifyObserved, isCandidate } from './observed.js';
import { budgetPlan } from './reindex.js';
import { skippedItem } from './skipped.js';
import { tallyPlan } from './totals.js';
import { joinDelta, joinTracked } from './join.js';
import { renameSources } from './rename-sources.js';

/**
 * Plans one sync: every observed, skipped and vanished path gets an action, a reason and its
 * credits; paid work is admitted against the budget smallest first; the reindex is decided.
 * Pure: the same input always gives the same plan, whatever the order of its lists.
 */
export function planSync(input: PlanInput): SyncPlan {
  const ctx = contextOf(input);
  const items: PlanItem[] = [];
  const extra: PlanItem[] = [];
  const candidates: Candidate[] = [];
  // The bulk's paid items (reprocesses), gathered as it is classified: no second pass over 100k items.
  const paid: PlanItem[] = [];
  const files = input.observation.files;
  const inPathOrder = input.observation.inPathOrder === true;
  const join =
    input.delta === undefined
      ? joinTracked(files, input.tracked, inPathOrder)
      : joinDelta(files, input.tracked, input.delta.vanished, inPathOrder);
  const { tracked } = join;

  // The hot loop: one small object per unchanged file.
  for (let i = 0; i < files.length; i++) {
    const result = classifyObserved(files[i] as ObservedFile, join.rows[i] as number, tracked, ctx);
    if (isCandidate(result)) candidates.push(result);
    else {
      items.push(result);
      if (isPaid(result)) paid.push(result);
    }
  }

  // A skipped path is not an observed file, so its tracked row (if any) is one the join left unmatched:
  // with none unmatched (the usual case), no skip entry needs a lookup.
  const unmatchedByKey = join.unmatched.length === 0 ? null : new Map(join.unmatched.map((t) => [trackedKey(t.source, t.path), t]));
  const skippedKeys = new Set<string>();
  for (const s of uniqueSkipped(input.observation.skipped)) {
    if (join.hasFile(s.source, s.path)) continue; // a file the source read wins over a skip entry
    let row: TrackedFile | undefined;
    if (unmatchedByKey !== null) {
      const key = trackedKey(s.source, s.path);
      row = unmatchedByKey.get(key);
      if (row !== undefined) skippedKeys.add(key);
    }
    extra.push(skippedItem(s, row, ctx.multiSource));
  }

  // The skip entries are strictly in path order (uniqueSkipped): while nothing else joins them, the
  // extras need no second check of their order before they are merged.
  const skippedOnly = extra.length;
  const vanished = join.unmatched.filter((t) => !skippedKeys.has(trackedKey(t.source, t.path))).sort(compareByPath);
  let consumed: ReadonlySet<TrackedFile> = new Set();
  if (candidates.length > 0) {
    const wanted = new Set(candidates.map((c) => c.sha256));
    const index = buildContentIndex(tracked, input.remote, wanted, input.held?.([...wanted]) ?? []);
    // A rename moves a file within what this run syncs: another runner's rows (a shared state) are not its to move.
    const synced = syncedSources(input);
    const resolved = resolveCandidates(candidates, renameSources(vanished.filter((t) => synced(t.source))), index, ctx);
    for (const item of resolved.items) extra.push(item);
    consumed = resolved.consumed;
  }
  pushDeleted(extra, vanished, consumed, input);
  const all = orderItems(items, join.filesSorted, extra, extra.length === skippedOnly);

  for (let i = 0; i < extra.length; i++) if (isPaid(extra[i] as PlanItem)) paid.push(extra[i] as PlanItem);
  const ordered = admissionOrder(paid);
  const { admission, reserved, reindex } = budgetPlan(ordered, input.budget, input.plan, input.reindexMinChangedFiles);
  applyAdmission(ordered, admission, reserved, extra);

  const { totals, counts } = tallyPlan(all, reindex.credits);
  // A delta plan's unchanged files are counted, not listed.
  totals.unchanged += input.delta?.unchanged ?? 0;
  counts['skip:unchanged'] += input.delta?.unchanged ?? 0;
  return {
    kind: 'plan',
    plannedAt: input.now.toISOString(),
    items: all,
    totals,
    counts,
    reindex,
    limits: {
      plan: input.plan,
      planMaxFileBytes: ctx.planMaxFileBytes,
      maxFileBytes: input.limits.maxFileBytes,
      effectiveMaxFileBytes: ctx.maxFileBytes,
    },
    uploadCost: ctx.uploadCost,
    ...(input.delta !== undefined ? { unchangedNotListed: input.delta.unchanged } : {}),
    budget: { caps: { ...input.budget.caps }, used: { ...input.budget.used }, planned: totals.creditsPlanned },
  };
}

function pushDeleted(items: PlanItem[], vanished: readonly TrackedFile[], consumed: ReadonlySet<TrackedFile>, input: PlanInput): void {
  if (vanished.length === 0) return;
  const synced = syncedSources(input);
  for (const t of vanished) {
    if (consumed.has(t)) continue;
    items.push(deletedItem(t, synced(t.source)));
  }
}

/** True for a source this plan's observation walked (every source when it names none). */
function syncedSources(input: PlanInput): (source: string) => boolean {
  const names = new Set(input.observation.sources.map((s) => s.name));
  return (source) => names.size === 0 || names.has(source);
}

/** True for the items that cost credits. In the bulk (observed, tracked, same content) only reprocesses can. */
function isPaid(item: PlanItem): boolean {
  return item.action === 'upload' || item.action === 'reprocess';
}

/** Skip entries, one per path (the first in a stable order wins), so their order never matters. */
function uniqueSkipped(list: readonly SkippedPath[]): readonly SkippedPath[] {
  if (isStrictlyInPathOrder(list)) return list; // as the sources deliver them: already one per path
  const sorted = [...list].sort((a, b) => compareByPath(a, b) || cmp(a.reason, b.reason) || cmp(a.detail, b.detail));
  return sorted.filter((s, i) => i === 0 || compareByPath(sorted[i - 1] as SkippedPath, s) !== 0);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
