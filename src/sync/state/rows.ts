import type { TrackedFile } from '../types.js';
import { decodeRemoteName, encodeRemoteName, isoOf, mtimeToBind, shaToBlob } from '../tracked/codec.js';
import type { EntryStatus, IntelPayload, NewOp, OpKind, OpState, OutboxOp, RunRecord, RunStatus, TrackedEntry } from './state-types.js';

// Row shapes and decoders both stores share (SQLite and PostgreSQL, and the `kbsync state migrate` snapshot):
// only where the source (an id or a name) and a hash (a BLOB or hex) are kept differs, so those are left out.

/** An outbox row's columns but its source and hash, with mtime as text (kind and state as read, or as plain strings). */
export type OpColumns<Kind extends string = string, State extends string = string> = {
  id: number;
  run_id: number | null;
  kind: Kind;
  path: string | null;
  size: number | null;
  mtime_ns: string | null;
  inode: number | null;
  remote_name: string | null;
  remote_id: string | null;
  reason: string | null;
  credits: number;
  idempotency_key: string;
  state: State;
  reserved: number;
  reserved_at: number | null;
  error_code: string | null;
  error: string | null;
  attempts: number;
  created_at: number;
  updated_at: number;
  payload_json: string | null;
};

/** An outbox row as an OutboxOp, given its source's name and its hash as hex (each null when the row has none). */
export function opOfRow(r: OpColumns<OpKind, OpState>, source: string | null, sha256: string | null): OutboxOp {
  return {
    id: r.id,
    runId: r.run_id,
    kind: r.kind,
    source,
    path: r.path,
    sha256,
    size: r.size,
    mtimeNs: r.mtime_ns,
    inode: r.inode,
    remoteName: source !== null && r.path !== null && r.kind === 'upload' ? decodeRemoteName(source, r.path, r.remote_name) : null,
    remoteId: r.remote_id,
    reason: r.reason,
    credits: r.credits,
    idempotencyKey: r.idempotency_key,
    state: r.state,
    reserved: r.reserved,
    reservedAt: r.reserved_at === null ? null : isoOf(r.reserved_at),
    errorCode: r.error_code,
    error: r.error,
    attempts: r.attempts,
    createdAt: isoOf(r.created_at),
    updatedAt: isoOf(r.updated_at),
    payload: r.payload_json === null ? null : (JSON.parse(r.payload_json) as IntelPayload),
  };
}

/** A tracked mtime no file has: the next pass's stat cannot match it, so the file is hashed again. */
const MTIME_RECHECK = '-1';

/**
 * What a done upload op leaves in its file's tracked row, but the remote fields and the action: the hash the
 * op sent (`hashed`, hex), or the one the server says it received when that differs (the file was edited while
 * it was sent: the row then records what the dataset holds, with an mtime no stat can have, so the next pass
 * hashes the file again), and the reason to record.
 */
export function uploadedFile(
  op: OpColumns<OpKind, OpState>,
  source: string,
  hashed: string,
  remoteSha: string | null,
): { file: Pick<TrackedFile, 'source' | 'path' | 'size' | 'mtimeNs' | 'inode' | 'sha256'>; reason: string | null } {
  const path = op.path as string;
  const received = remoteSha !== null && remoteSha.toLowerCase() !== hashed ? remoteSha.toLowerCase() : null;
  return {
    file: {
      source,
      path,
      size: op.size as number,
      mtimeNs: received === null ? (op.mtime_ns as string) : MTIME_RECHECK,
      inode: op.inode as number,
      sha256: received ?? hashed,
    },
    reason:
      received === null
        ? op.reason
        : `${op.reason ?? 'upload'}; the service received other content (sha256 ${hashed.slice(0, 8)} -> ${received.slice(0, 8)}): edited during the upload, hashed again on the next pass`,
  };
}

/** The outbox columns newOpValues() gives values for, in its order. */
export const NEW_OP_COLUMNS = 'path, sha256, size, mtime_ns, inode, remote_name, remote_id, reason, payload_json';

/**
 * A new op's source (a name; null for one of no file or entry) and its values for NEW_OP_COLUMNS: what each
 * kind of op records (an upload its file, a reprocess its remote id, an intelligence write its digest and
 * payload); `mtime` gives the form the driver binds a nanosecond mtime in.
 */
export function newOpValues<M>(op: NewOp, mtime: (ns: bigint) => M): { source: string | null; values: unknown[] } {
  const upload = op.kind === 'upload' ? op : null;
  const intel = op.kind === 'intelligence' || op.kind === 'intelligence_batch' ? op : null;
  const fileOp = op.kind === 'upload' || op.kind === 'reprocess' ? op : intel;
  return {
    source: fileOp === null ? null : fileOp.source,
    values: [
      fileOp?.path ?? null,
      upload === null ? (intel === null ? null : shaToBlob(intel.digest)) : shaToBlob(upload.sha256),
      upload?.size ?? null,
      upload === null ? null : mtime(mtimeToBind(upload.mtimeNs)),
      upload?.inode ?? null,
      upload === null ? null : encodeRemoteName(upload.source, upload.path, upload.remoteName),
      op.kind === 'reprocess' ? op.remoteId : null,
      op.reason ?? null,
      intel === null ? null : JSON.stringify(intel.payload),
    ],
  };
}

/** A `runs` row. */
export type RunRow = {
  id: number;
  command: string;
  status: string;
  started_at: number;
  finished_at: number | null;
  summary_json: string | null;
};

/** A `runs` row as a RunRecord. */
export function runOfRow(r: RunRow): RunRecord {
  return {
    id: r.id,
    command: r.command,
    status: r.status as RunStatus,
    startedAt: isoOf(r.started_at),
    finishedAt: r.finished_at === null ? null : isoOf(r.finished_at),
    summary: r.summary_json === null ? null : (JSON.parse(r.summary_json) as unknown),
  };
}

const ENTRY_STATUSES: ReadonlySet<string> = new Set(['pending', 'processed', 'failed']);

/** The service's status word as an EntryStatus (an unknown word is 'unknown'). */
export function toEntryStatus(status: string | null): EntryStatus {
  return status !== null && ENTRY_STATUSES.has(status) ? (status as EntryStatus) : 'unknown';
}

/** An `intel_entries` row's columns but its source and hash. */
export type EntryColumns = {
  agent_id: string;
  remote_id: string | null;
  status: string | null;
  error: string | null;
  path: string | null;
  title: string | null;
  updated_at: number;
};

/** An `intel_entries` row as a TrackedEntry, given its hash as hex and its source's name (null when it has none). */
export function entryOfRow(r: EntryColumns, sha256: string, source: string | null): TrackedEntry {
  return {
    sha256,
    agentId: r.agent_id,
    remoteId: r.remote_id,
    status: toEntryStatus(r.status),
    error: r.error,
    source,
    path: r.path,
    title: r.title,
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}
