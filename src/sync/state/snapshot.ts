import type { EntryColumns, FileColumns, OpColumns, RunRow } from './rows.js';

/**
 * A whole state as plain rows, the same for both stores (`kbsync state migrate`): ids kept, so that
 * ledger rows still name their ops and runs; hashes as hex; source names instead of ids.
 */
export type StateSnapshot = {
  files: (FileColumns & { source: string; sha256: string })[];
  runs: RunRow[];
  outbox: (OpColumns & { source: string | null; sha256: string | null })[];
  ledger: {
    id: number;
    op_id: number;
    run_id: number;
    kind: string;
    credits: number;
    remote_id: string | null;
    at: number;
    period_day: number;
  }[];
  budgetTotals: { period: string; reserved: number; spent: number }[];
  meta: { key: string; value: string }[];
  webhookEvents: { id: string; type: string; sent_at: number; received_at: number; data_json: string | null }[];
  intelEntries: (EntryColumns & { sha256: string; source: string | null })[];
};

/** How many rows of each kind a snapshot holds (what `kbsync state migrate` reports). */
export function snapshotCounts(s: StateSnapshot): Record<string, number> {
  return {
    files: s.files.length,
    runs: s.runs.length,
    outbox: s.outbox.length,
    ledger: s.ledger.length,
    budgetTotals: s.budgetTotals.length,
    meta: s.meta.length,
    webhookEvents: s.webhookEvents.length,
    intelEntries: s.intelEntries.length,
  };
}
