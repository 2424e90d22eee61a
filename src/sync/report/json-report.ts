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

function runItemJson(item: RunItem): JsonReportItem {
  // Object.assign, not spread (see runItemOf in executor/run-sync.ts: ~10x slower over 100k items).
  return Object.assign(itemJson(item, item.creditsCharged), { outcome: item.outcome, creditsPlanned: item.credits, error: item.error });
}

/**
 * Items per chunk of jsonReportChunks: ~64 KB of text, so each chunk's strings are young-generation
 * garbage. At 2,048 (~500 KB) they went to the large-object space, and a 100k-item report ended
 * with a full GC of a 220 MB heap (peak RSS 240 MB against 218 MB now; time unchanged).
 */
const ITEMS_PER_CHUNK = 256;

/**
 * The `--json` document as text, in chunks to write one after the other: the same document as
 * `JSON.stringify(toJsonReport(result))`, laid out with the summary on one line and one item per
 * line (greppable, and a third of the pretty-printed size). Each chunk of items is one
 * JSON.stringify of an array (V8's fastest path), split into lines where one item ends and the
 * next begins: `},{"source":` cannot occur inside a value, where every `"` is escaped.
 *
 * Measured on the 100k bench tree (thread CPU of the report in a fresh process, medians of 7):
 * this takes ~55 ms to make the text, JSON.stringify being ~620M of its instructions (callgrind).
 * No cheaper way was found: a template per item with the repeated strings stringified once
 * (~5 ms slower), one JSON.stringify per item joined by lines (the same), chunks of 64 or 1,024
 * items (10–15 ms slower).
 *
 * Nor a second thread (tried for issue 15, 2026-11-26; commit bf582f9, reverted): a worker at the
 * lowest priority (nice 19 on its own thread id), handed the state's rows as loaded, made every
 * tracked row's line as if unchanged, as UTF-8 batches; the report copied the bytes of each
 * unchanged item whose fields were its row's and made the rest (byte-identical, tested). The
 * main thread's report took ~35 ms instead of ~60 when every line was ready, but the worker cost
 * ~170 ms more CPU per run (its isolate, decoding the rows again, 81k stringify; 1,130 ms against
 * 960 ms of CPU), posting the rows cost the main thread ~10 ms, and on a busy machine the
 * low-priority thread starved and its lines came too late. bench/compare.ts on the 100k tree,
 * 15 interleaved rounds, load average 4-5 (medians of per-round ratios to main's build): `plan
 * --json` 1.12x with it, 0.98x for the same code without it; fastest --json run 638 ms against 573.
 * (Text, which never starts it, came out 1.07x and 0.98x: the noise of such a machine is ~5%.)
 */
export function* jsonReportChunks(result: SyncPlan | RunResult): Generator<string> {
  yield `{\n  "summary": ${JSON.stringify(summaryOf(result.totals))},\n  "items": [`;
  const { items } = result;
  for (let start = 0; start < items.length; start += ITEMS_PER_CHUNK) {
    const end = Math.min(items.length, start + ITEMS_PER_CHUNK);
    const chunk = new Array<JsonReportItem>(end - start);
    for (let i = start; i < end; i++) {
      chunk[i - start] =
        result.kind === 'run' ? runItemJson(items[i] as RunItem) : itemJson(items[i] as PlanItem, (items[i] as PlanItem).credits);
    }
    const text = JSON.stringify(chunk);
    yield `${start === 0 ? '' : ','}\n    ${text.slice(1, -1).replaceAll('},{"source":', '},\n    {"source":')}`;
  }
  const intel = result.intelligence;
  const tail = intel === undefined ? '' : `,\n  "intelligence": ${JSON.stringify(intelligenceJson(intel))}`;
  yield `${items.length === 0 ? '' : '\n  '}]${tail}\n}\n`;
}
