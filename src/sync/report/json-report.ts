import type { PlanAction, PlanItem, PlanTotals, RunItem, RunOutcome, RunResult, SyncPlan } from '../types.js';

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

/** The `--json` document of `kbsync plan`, `sync` and `status`. */
export type JsonReport = { summary: PlanTotals; items: JsonReportItem[] };

/** The `--json` document of a plan or a run: `{"summary": {...}, "items": [...]}`, keys in the agreed order. */
export function toJsonReport(result: SyncPlan | RunResult): JsonReport {
  const t = result.totals;
  const summary: PlanTotals = {
    uploaded: t.uploaded,
    unchanged: t.unchanged,
    renamed: t.renamed,
    skipped: t.skipped,
    deferred: t.deferred,
    failed: t.failed,
    creditsPlanned: t.creditsPlanned,
    creditsSpent: t.creditsSpent,
  };
  const items = result.kind === 'run' ? result.items.map(runItemJson) : result.items.map((i) => itemJson(i, i.credits));
  return { summary, items };
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
  return { ...itemJson(item, item.creditsCharged), outcome: item.outcome, creditsPlanned: item.credits, error: item.error };
}
