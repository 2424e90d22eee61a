/**
 * A whole state as plain rows, the same for both stores (`kbsync state migrate`): ids kept, so that
 * ledger rows still name their ops and runs; hashes as hex; source names instead of ids.
 */
export type StateSnapshot = {
  files: {
    source: string;
    path: string;
    size: number;
    mtime_ns: string;
    inode: number;
    sha256: string;
    remote_name: string | null;
    remote_id: string | null;
    remote_status: string | null;
    reprocess_attempts: number;
    last_action: string | null;
    last_reason: string | null;
    updated_at: number;
    remote_error: string | null;
  }[];
  runs: { id: number; command: string; status: string; started_at: number; finished_at: number | null; summary_json: string | null }[];
  outbox: {
    id: number;
    run_id: number | null;
    kind: string;
    source: string | null;
    path: string | null;
    sha256: string | null;
    size: number | null;
    mtime_ns: string | null;
    inode: number | null;
    remote_name: string | null;
    remote_id: string | null;
    reason: string | null;
    credits: number;
    idempotency_key: string;
    state: string;
    reserved: number;
    reserved_at: number | null;
    error_code: string | null;
    error: string | null;
    attempts: number;
    created_at: number;
    updated_at: number;
    payload_json: string | null;
  }[];
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
  intelEntries: {
    sha256: string;
    agent_id: string;
    remote_id: string | null;
    status: string | null;
    error: string | null;
    source: string | null;
    path: string | null;
    title: string | null;
    updated_at: number;
  }[];
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
