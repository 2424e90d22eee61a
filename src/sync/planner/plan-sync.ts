import type { ObservedFile, PlanInput, PlanItem, SkippedPath, SyncPlan, TrackedFile } from '../types.js';
import { admissionOrder, applyAdmission } from './budget.js';
import { resolveCandidates } from './candidates.js';
import { buildContentIndex } from './content-index.js';
import { contextOf, type Candidate } from './context.js';
import { deletedItem } from './deleted.js';
import { compareByPath, trackedKey } from './keys.js';
import { mergeByKey } from './order.js';
import { classifyObserved, isCandidate } from './observed.js';
import { budgetPlan } from './reindex.js';
import { skippedItem } from './skipped.js';
import { emptyCounts, summarize } from './totals.js';
import { findVanished, renameSources } from './vanished.js';

/**
 * Plans one sync: every observed, skipped and vanished path gets an action, a reason and its
 * credits; paid work is admitted against the budget smallest first; the reindex is decided.
 * Pure: the same input always gives the same plan, whatever the order of its lists.
 */
export function planSync(input: PlanInput): SyncPlan {
  const ctx = contextOf(input);
  const { tracked } = input;
  const items: PlanItem[] = [];
  const extra: PlanItem[] = [];
  const candidates: Candidate[] = [];
  const skipped = uniqueSkipped(input.observation.skipped);
  const files = input.observation.files;
  const itemKeys: string[] = [];
  let presentTracked = 0;

  // The hot loop: one key, one map lookup and one small object per file. No Set of seen keys:
  // vanished rows are looked for only when fewer tracked rows were seen than exist.
  for (let i = 0; i < files.length; i++) {
    const file = files[i] as ObservedFile;
    const key = trackedKey(file.source, file.path);
    if (skipped.size > 0) skipped.delete(key); // a file the source read wins over a skip entry
    const t = tracked.get(key);
    if (t !== undefined) presentTracked += 1;
    const result = classifyObserved(file, t, ctx);
    if (isCandidate(result)) {
      candidates.push(result);
    } else {
      items.push(result);
      itemKeys.push(key);
    }
  }

  for (const [key, s] of skipped) {
    const t = tracked.get(key);
    if (t !== undefined) presentTracked += 1;
    extra.push(skippedItem(s, t, ctx.multiSource));
  }

  const vanished = presentTracked === tracked.size ? [] : findVanished(tracked, presentKeys(itemKeys, candidates, skipped));
  if (candidates.length > 0) {
    const index = buildContentIndex(tracked, input.remote, new Set(candidates.map((c) => c.sha256)));
    const resolved = resolveCandidates(candidates, renameSources(vanished), index, ctx);
    for (const item of resolved.items) extra.push(item);
    pushDeleted(extra, vanished, resolved.consumed, input);
  } else {
    pushDeleted(extra, vanished, new Set(), input);
  }
  const all = mergeByKey(items, itemKeys, extra);

  const ordered = admissionOrder(paidItems(items, extra));
  const { admission, reserved, reindex } = budgetPlan(ordered, input.budget, input.plan, input.reindexMinChangedFiles);
  applyAdmission(ordered, admission, reserved, extra);

  const counts = emptyCounts();
  for (let i = 0; i < all.length; i++) counts[(all[i] as PlanItem).action] += 1;
  const totals = summarize(all, reindex);
  return {
    kind: 'plan',
    plannedAt: input.now.toISOString(),
    items: all,
    totals,
    counts,
    reindex,
    limits: { plan: input.plan, planMaxFileBytes: ctx.planMaxFileBytes, maxFileBytes: input.limits.maxFileBytes, effectiveMaxFileBytes: ctx.maxFileBytes },
    budget: { caps: { ...input.budget.caps }, used: { ...input.budget.used }, planned: totals.creditsPlanned },
  };
}

function pushDeleted(items: PlanItem[], vanished: readonly TrackedFile[], consumed: ReadonlySet<TrackedFile>, input: PlanInput): void {
  if (vanished.length === 0) return;
  const synced = new Set(input.observation.sources.map((s) => s.name));
  for (const t of vanished) {
    if (consumed.has(t)) continue;
    items.push(deletedItem(t, synced.size === 0 || synced.has(t.source)));
  }
}

/** The items that cost credits. In the bulk (observed, tracked, same content) only reprocesses can. */
function paidItems(bulk: readonly PlanItem[], extra: readonly PlanItem[]): PlanItem[] {
  const paid: PlanItem[] = [];
  for (const list of [bulk, extra]) {
    for (let i = 0; i < list.length; i++) {
      const item = list[i] as PlanItem;
      if (item.action === 'upload' || item.action === 'reprocess') paid.push(item);
    }
  }
  return paid;
}

/** Every key a source reported (only needed when some tracked row may have vanished). */
function presentKeys(itemKeys: readonly string[], candidates: readonly Candidate[], skipped: ReadonlyMap<string, SkippedPath>): Set<string> {
  const present = new Set(itemKeys);
  for (const c of candidates) present.add(trackedKey(c.file.source, c.file.path));
  for (const key of skipped.keys()) present.add(key);
  return present;
}

/** Skip entries by key, one per path (the first in a stable order wins), so their order never matters. */
function uniqueSkipped(list: readonly SkippedPath[]): Map<string, SkippedPath> {
  const byKey = new Map<string, SkippedPath>();
  if (list.length === 0) return byKey;
  const sorted = [...list].sort((a, b) => compareByPath(a, b) || cmp(a.reason, b.reason) || cmp(a.detail, b.detail));
  for (const s of sorted) {
    const key = trackedKey(s.source, s.path);
    if (!byKey.has(key)) byKey.set(key, s);
  }
  return byKey;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
