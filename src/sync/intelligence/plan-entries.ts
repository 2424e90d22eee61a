import { costOf, isAdvancedPlan, type Plan } from '../../shared/plans.js';
import { blockingPeriod } from '../planner/budget.js';
import { overBudgetReason } from '../planner/reasons.js';
import type { TrackedEntry } from '../state/index.js';
import type { BudgetWindow, EntryItem, EntryTotals, IntelPlan } from '../types.js';
import type { EntryCandidate, IntelObservation } from './read.js';

/** The planning input of the intelligence entries. */
export type EntryPlanInput = {
  observation: IntelObservation;
  /** What the dataset holds, by content SHA-256 (the state's intel_entries). */
  tracked: ReadonlyMap<string, TrackedEntry>;
  plan: Plan;
  budget: BudgetWindow;
  /** Credits the rest of the plan (uploads, reprocesses, reindex) already admits: entries come after them. */
  plannedBefore: number;
};

/** Writes per batch call (docs/api.md: 1..50 entries). */
export const MAX_BATCH_ENTRIES = 50;

/**
 * Plans the intelligence entries, in (source, path) order: content the dataset already holds is
 * unchanged (or a duplicate of an entry written from elsewhere), content seen earlier in this plan is a
 * duplicate charged once, and each other entry is a write of 1 credit, admitted against the budget
 * after the rest of the plan; one over a cap waits (`defer:over-budget`), and so do its duplicates.
 * A record that could not be read is `invalid` (counted as failed) with its line and field.
 */
export function planEntries(input: EntryPlanInput): IntelPlan {
  const items: EntryItem[] = [];
  const cost = costOf({ kind: 'intelligence', duplicate: false });
  // The first entry of each content in this plan, and what happened to it.
  const firstBySha = new Map<string, EntryItem>();
  let admitted = 0;
  // What each place held when it was last written: an edited record's old entry stays in the dataset.
  const byPlace = new Map<string, TrackedEntry>();
  for (const t of input.tracked.values()) if (t.source !== null && t.path !== null) byPlace.set(`${t.source}\0${t.path}`, t);
  for (const c of input.observation.entries) {
    const base = baseItem(c);
    const known = input.tracked.get(c.sha256);
    const first = firstBySha.get(c.sha256);
    if (known !== undefined && known.remoteId !== null) {
      const same = known.source === c.source && known.path === c.path;
      const where = known.source === null ? `entry ${known.remoteId}` : `${known.source}/${known.path} (entry ${known.remoteId})`;
      items.push({
        ...base,
        action: same ? 'skip:unchanged' : 'skip:duplicate-content',
        reason: same ? `unchanged: entry ${known.remoteId}, ${known.status}` : `same content as ${where}, already in the dataset`,
        remoteId: known.remoteId,
      });
    } else if (first !== undefined) {
      const deferred = first.action === 'defer:over-budget';
      items.push({
        ...base,
        action: deferred ? 'defer:over-budget' : 'skip:duplicate-content',
        reason: deferred
          ? `same content as ${first.source}/${first.path}, whose write waits for the budget`
          : `same content as ${first.source}/${first.path}, written in this run (charged once)`,
      });
    } else {
      const block = blockingPeriod(input.budget, input.plannedBefore + admitted, cost);
      const item: EntryItem =
        block === null
          ? { ...base, action: 'write', reason: writeReason(c, byPlace.get(`${c.source}\0${c.path}`)), credits: cost }
          : {
              ...base,
              action: 'defer:over-budget',
              reason: `${overBudgetReason(block.period, block.committed, block.cost, block.cap, 0)}; the write waits`,
            };
      if (block === null) admitted += cost;
      firstBySha.set(c.sha256, item);
      items.push(item);
    }
  }
  for (const o of input.observation.others) {
    items.push({
      source: o.source,
      path: o.file,
      action: 'skip:unsupported',
      reason: 'not an entry file: an intelligence source reads .jsonl, .json, .yaml, .yml, .csv and .md',
      credits: 0,
      sha256: null,
      agentId: o.agentId,
      title: null,
      remoteId: null,
      line: 0,
    });
  }
  for (const p of input.observation.problems) {
    items.push({
      source: p.source,
      path: `${p.file}:${p.line}`,
      action: 'invalid',
      reason: `${p.file}:${p.line}: ${p.field === null ? '' : `${p.field}: `}${p.message}`,
      credits: 0,
      sha256: null,
      agentId: p.agentId,
      title: null,
      remoteId: null,
      line: p.line,
    });
  }
  // By source, file and line: the order of the files, each file's entries as they come in it (a stable sort).
  items.sort((a, b) => cmp(a.source, b.source) || cmp(fileOf(a.path), fileOf(b.path)) || a.line - b.line);
  return { items, mode: isAdvancedPlan(input.plan) ? 'batch' : 'single', totals: entryTotals(items) };
}

/** "new entry: Backups", or for an edited record "changed: entry 17 (its old text) stays in the dataset (the API has no delete)". */
function writeReason(c: EntryCandidate, before: TrackedEntry | undefined): string {
  const title = c.title === null ? '' : `: ${c.title}`;
  if (before === undefined || before.sha256 === c.sha256 || before.remoteId === null) return `new entry${title}`;
  return `changed${title}; its previous text stays in the dataset as entry ${before.remoteId} (the API has no delete)`;
}

function baseItem(c: EntryCandidate): EntryItem {
  return {
    source: c.source,
    path: c.path,
    action: 'write',
    reason: '',
    credits: 0,
    sha256: c.sha256,
    agentId: c.agentId,
    title: c.title,
    remoteId: null,
    line: c.line,
  };
}

/** The counts of entries by what happened to them (a run's writes count by how they ended). */
export function entryTotals(items: readonly EntryItem[]): EntryTotals {
  const t: EntryTotals = { written: 0, unchanged: 0, duplicate: 0, skipped: 0, deferred: 0, failed: 0, creditsPlanned: 0, creditsSpent: 0 };
  for (const i of items) {
    t.creditsPlanned += i.credits;
    t.creditsSpent += i.creditsCharged ?? 0;
    if (i.outcome === 'not-run' || i.action === 'defer:over-budget') t.deferred += 1;
    else if (i.action === 'skip:unchanged') t.unchanged += 1;
    else if (i.action === 'skip:duplicate-content') t.duplicate += 1;
    else if (i.action === 'skip:unsupported') t.skipped += 1;
    else if (i.action === 'invalid') t.failed += 1;
    else if (i.outcome === undefined || i.outcome === 'done') t.written += 1;
    else t.failed += 1;
  }
  return t;
}

/** The file of an item's path (`faq.jsonl#3` or `faq.jsonl:3`). */
function fileOf(path: string): string {
  const at = path.search(/[#:][^#:/]*$/);
  return at === -1 ? path : path.slice(0, at);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
