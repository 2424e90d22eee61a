import type { FileRow } from '../tracked/fields.js';
import type { EntryColumns, OpColumns, RunRow } from './rows.js';

/**
 * A whole state as plain rows, the same for both stores (`kbsync state migrate`): ids kept, so that
 * ledger rows still name their ops and runs; hashes as hex; source names instead of ids.
 */
export type StateSnapshot = {
  files: (FileRow & { source: string })[];
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
  /** Held copies (remote_copies): remote_name stored as in files, for the row's source and path. */
  remoteCopies: { remote_id: string; sha256: string; source: string; path: string; remote_name: string | null; status: string | null }[];
};

/** The outbox columns snapshotOpValues() gives values for, in its order: all but id, run_id, source, sha256 and mtime_ns. */
export const SNAPSHOT_OP_COLUMNS = `kind, path, size, inode, remote_name, remote_id, reason, credits, idempotency_key, state, reserved, reserved_at,
  error_code, error, attempts, created_at, updated_at, payload_json`;

/** A snapshot outbox row's values for SNAPSHOT_OP_COLUMNS (what both stores write as they are). */
export function snapshotOpValues(o: StateSnapshot['outbox'][number]): unknown[] {
  return [
    o.kind,
    o.path,
    o.size,
    o.inode,
    o.remote_name,
    o.remote_id,
    o.reason,
    o.credits,
    o.idempotency_key,
    o.state,
    o.reserved,
    o.reserved_at,
    o.error_code,
    o.error,
    o.attempts,
    o.created_at,
    o.updated_at,
    o.payload_json,
  ];
}

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
    remoteCopies: s.remoteCopies.length,
  };
}
