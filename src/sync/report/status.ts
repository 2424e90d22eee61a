import { plural } from '../planner/format.js';
import type { PlanTotals, TrackedFile } from '../types.js';
import { fields } from './columns.js';

/** What `kbsync status` reports. */
export type StatusReport = {
  /** The last sync's totals (zeros when there was none). */
  summary: PlanTotals;
  /** One item per tracked file: its last action and reason; `credits` is 0 (status spends nothing). */
  items: { source: string; path: string; action: string; reason: string; credits: number; remoteId: string | null; remoteStatus: string | null }[];
  tracked: { files: number; byRemoteStatus: Record<string, number> };
  credits: { run: number; day: number; month: number; caps: { run: number; day: number; month: number }; utcDay: string; utcMonth: string };
  outbox: { pending: number; unknown: number };
  lastRun: { id: number; status: string; startedAt: string; finishedAt: string | null } | null;
};

type StatusInput = {
  tracked: readonly TrackedFile[];
  lastRun: { id: number; status: string; startedAt: string; finishedAt: string | null; summary: unknown } | null;
  credits: { day: number; month: number; utcDay: string; utcMonth: string };
  caps: { run: number; day: number; month: number };
  outbox: { pending: number; unknown: number };
};

const ZERO: PlanTotals = { uploaded: 0, unchanged: 0, renamed: 0, skipped: 0, deferred: 0, failed: 0, creditsPlanned: 0, creditsSpent: 0 };

/** Builds the status document from what the state holds. */
export function statusReport(input: StatusInput): StatusReport {
  const byRemoteStatus: Record<string, number> = {};
  for (const f of input.tracked) {
    const key = f.remoteStatus ?? 'not uploaded';
    byRemoteStatus[key] = (byRemoteStatus[key] ?? 0) + 1;
  }
  const last = input.lastRun;
  const lastTotals = (last?.summary as { totals?: PlanTotals } | null | undefined)?.totals;
  return {
    summary: lastTotals ?? ZERO,
    items: input.tracked.map((f) => ({
      source: f.source, path: f.path, action: f.lastAction ?? 'tracked', reason: f.lastReason ?? '', credits: 0,
      remoteId: f.remoteId, remoteStatus: f.remoteStatus,
    })),
    tracked: { files: input.tracked.length, byRemoteStatus },
    credits: { run: 0, day: input.credits.day, month: input.credits.month, caps: input.caps, utcDay: input.credits.utcDay, utcMonth: input.credits.utcMonth },
    outbox: input.outbox,
    lastRun: last === null ? null : { id: last.id, status: last.status, startedAt: last.startedAt, finishedAt: last.finishedAt },
  };
}

/** The status for people. */
export function formatStatus(r: StatusReport): string {
  const statuses = Object.entries(r.tracked.byRemoteStatus).map(([s, n]) => `${n} ${s}`).join(', ');
  const last = r.lastRun;
  return fields([
    ['tracked', `${plural(r.tracked.files, 'file')}${statuses === '' ? '' : ` (${statuses})`}`],
    ['credits today', `${r.credits.day} of ${r.credits.caps.day} (UTC ${r.credits.utcDay})`],
    ['credits this month', `${r.credits.month} of ${r.credits.caps.month} (${r.credits.utcMonth})`],
    ['pending work', r.outbox.pending === 0 && r.outbox.unknown === 0 ? 'none' : `${r.outbox.pending} queued, ${r.outbox.unknown} awaiting reconciliation`],
    ['last sync', last === null ? 'never' : `#${last.id} ${last.status}, started ${last.startedAt}${last.finishedAt ? `, finished ${last.finishedAt}` : ''}`],
    ['last sync totals', `${r.summary.uploaded} uploaded, ${r.summary.unchanged} unchanged, ${r.summary.renamed} renamed, ${r.summary.skipped} skipped, ${r.summary.deferred} deferred, ${r.summary.failed} failed; ${r.summary.creditsSpent} credits spent`],
  ], '').join('\n');
}
