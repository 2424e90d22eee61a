import { runItemOf } from '../executor/run-item.js';
import { asPlanItem, withUnlisted, type UnlistedRows } from '../planner/unlisted.js';
import type { IntelPlan, PlanAction, PlanItem, PlanTotals, RunItem, RunOutcome, RunResult, SyncPlan } from '../types.js';

/** One item of the `--json` document: the five agreed fields first, then facts scripts find useful. */
export type JsonReportItem = {
  source: string;
  path: string;
  action: PlanAction;
  reason: string;
  /** Planned credits in a plan; credits actually charged in a run. */
  credits: number;
  remoteName: string;
  remoteId: string | null;
  size: number | null;
  sha256: string | null;
  renamedFrom?: string;
  staleRemoteId?: string | null;
  deferredBy?: string;
  /** Run only: how the item ended, what it was planned to cost, and the server's reason when it failed. */
  outcome?: RunOutcome;
  creditsPlanned?: number;
  error?: string | null;
};

/** The `--json` document of `kbsync plan`, `sync` and `status`; `intelligence` only with an intelligence source. */
export type JsonReport = { summary: PlanTotals; items: JsonReportItem[]; intelligence?: ReturnType<typeof intelligenceJson> };

/** The intelligence part of the `--json` document: how entries are sent, their totals, and one object per entry. */
function intelligenceJson(intel: IntelPlan) {
  return {
    mode: intel.mode,
    summary: intel.totals,
    items: intel.items.map((i) => ({
      source: i.source,
      path: i.path,
      action: i.action,
      reason: i.reason,
      credits: i.outcome === undefined ? i.credits : (i.creditsCharged ?? 0),
      sha256: i.sha256,
      agentId: i.agentId,
      title: i.title,
      remoteId: i.remoteId,
      line: i.line,
      ...(i.outcome === undefined ? {} : { outcome: i.outcome, creditsPlanned: i.credits, error: i.error ?? null }),
    })),
  };
}

/** The `--json` document of a plan or a run: `{"summary": {...}, "items": [...]}`, keys in the agreed order. */
export function toJsonReport(result: SyncPlan | RunResult): JsonReport {
  const items = result.kind === 'run' ? result.items.map(runItemJson) : result.items.map((i) => itemJson(i, i.credits));
  const report: JsonReport = { summary: summaryOf(result.totals), items };
  if (result.intelligence !== undefined) report.intelligence = intelligenceJson(result.intelligence);
  return report;
}

/** The agreed summary keys, in order (a RunResult's totals may carry more). */
function summaryOf(t: PlanTotals): PlanTotals {
  return {
    uploaded: t.uploaded,
    unchanged: t.unchanged,
    renamed: t.renamed,
    skipped: t.skipped,
    deferred: t.deferred,
    failed: t.failed,
    creditsPlanned: t.creditsPlanned,
    creditsSpent: t.creditsSpent,
  };
}

function itemJson(item: PlanItem, credits: number): JsonReportItem {
  const out: JsonReportItem = {
    source: item.source,
    path: item.path,
    action: item.action,
    reason: item.reason,
    credits,
    remoteName: item.remoteName,
    remoteId: item.remoteId,
    size: item.size,
    sha256: item.sha256,
  };
  if (item.renamedFrom !== undefined) out.renamedFrom = `${item.renamedFrom.source}/${item.renamedFrom.path}`;
  if (item.staleRemoteId !== undefined) out.staleRemoteId = item.staleRemoteId;
  if (item.deferredBy !== undefined) out.deferredBy = item.deferredBy;
  return out;
}

/** The run item of an unchanged file the run counted: a free decision, nothing to record. */
const unchangedRunItem = (item: PlanItem): RunItem => runItemOf(item, undefined, undefined);

function runItemJson(item: RunItem): JsonReportItem {
  // Object.assign, not spread (see runItemOf in executor/run-item.ts: spread is slower over many items).
  return Object.assign(itemJson(item, item.creditsCharged), { outcome: item.outcome, creditsPlanned: item.credits, error: item.error });
}

/**
 * Items per chunk of jsonReportChunks: tens of KB of text, small enough for each chunk's strings to die
 * young. Much larger chunks land in the large-object space and end a big report with a full GC.
 */
const ITEMS_PER_CHUNK = 256;

/**
 * The `--json` document as text, in chunks to write one after the other: the same document as
 * `JSON.stringify(toJsonReport(result))`, laid out with the summary on one line and one item per
 * line (greppable, and a third of the pretty-printed size). Each chunk of items is one
 * JSON.stringify of an array (V8's fastest path), split into lines where one item ends and the
 * next begins: `},{"source":` cannot occur inside a value, where every `"` is escaped. Per-item
 * templates, per-item stringify and a second thread making the lines ahead were all slower in all.
 * `unlisted`: the rows of the unchanged files a delta plan counted, listed among its items as the
 * full plan of the same pass lists them (the same document).
 */
export function* jsonReportChunks(result: SyncPlan | RunResult, unlisted: UnlistedRows | null = null): Generator<string> {
  yield `{\n  "summary": ${JSON.stringify(summaryOf(result.totals))},\n  "items": [`;
  let count = 0;
  let chunk: JsonReportItem[] = [];
  const flush = (): string => {
    const text = JSON.stringify(chunk);
    const out = `${count === chunk.length ? '' : ','}\n    ${text.slice(1, -1).replaceAll('},{"source":', '},\n    {"source":')}`;
    chunk = [];
    return out;
  };
  // A delta plan's unchanged files come from their rows, made as they are written.
  if (result.kind === 'run') {
    for (const item of withUnlisted(result.items, unlisted, unchangedRunItem)) {
      chunk.push(runItemJson(item));
      count += 1;
      if (chunk.length === ITEMS_PER_CHUNK) yield flush();
    }
  } else {
    for (const item of withUnlisted(result.items, unlisted, asPlanItem)) {
      chunk.push(itemJson(item, item.credits));
      count += 1;
      if (chunk.length === ITEMS_PER_CHUNK) yield flush();
    }
  }
  if (chunk.length > 0) yield flush();
  const intel = result.intelligence;
  const tail = intel === undefined ? '' : `,\n  "intelligence": ${JSON.stringify(intelligenceJson(intel))}`;
  yield `${count === 0 ? '' : '\n  '}]${tail}\n}\n`;
}
