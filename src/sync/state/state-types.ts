import { OUTBOX_KINDS, type OutboxKind, type OutboxRowOf } from '../../shared/plans.js';
import type { RemoteStatus } from '../types.js';

/** Every paid operation kind the outbox carries, derived from the one list of paid calls (shared/plans.ts). */
export const OP_KINDS = OUTBOX_KINDS;
export type OpKind = OutboxKind;

/** Refuses an outbox row of a kind not in OP_KINDS (a row is never written with a kind nothing can settle). */
export function assertOpKind(kind: string): asserts kind is OpKind {
  if (!(OP_KINDS as readonly string[]).includes(kind))
    throw new Error(`outbox: unknown operation kind "${kind}" (the kinds are ${OP_KINDS.join(', ')})`);
}

/** What an intelligence write sends: its agent, and per entry the SHA-256 of its content and where it comes from. */
export type IntelPayload = {
  agentId: string;
  entries: { sha256: string; source: string; path: string; title: string | null }[];
};

/**
 * pending → (reserve) in_flight → (settle) done | failed | unknown;
 * unknown → (resolveUnknown) done | pending; pending → (cancelOp, or a newer enqueue for the same path) cancelled.
 */
export type OpState = 'pending' | 'in_flight' | 'done' | 'failed' | 'unknown' | 'cancelled';

/** What each shape of outbox row carries beside its kind (PAID_CALLS's `row`, shared/plans.ts). */
type OpRows = {
  file: { source: string; path: string; sha256: string; size: number; mtimeNs: string; inode: number; remoteName: string };
  'remote-file': { source: string; path: string; remoteId: string };
  call: unknown;
  entries: {
    /** The first entry's source and path (for explain and the ledger). */
    source: string;
    path: string;
    /** SHA-256 of the request's entries: an open op with the same digest is the same work (its idempotency key is kept). */
    digest: string;
    /** One entry (`intelligence`) or up to 50 (`intelligence_batch`); credits: 1 per entry not yet in the dataset. */
    payload: IntelPayload;
  };
};

/** An operation to put in the outbox; `credits` is the planned cost (costOf). */
export type NewOp = {
  [K in OpKind]: { kind: K; credits: number; reason?: string; runId?: number } & OpRows[OutboxRowOf<K>];
}[OpKind];

/** An outbox row. Times are ISO-8601 UTC. */
export type OutboxOp = {
  id: number;
  /** The run that enqueued it, then the run that reserved it. */
  runId: number | null;
  kind: OpKind;
  source: string | null;
  path: string | null;
  sha256: string | null;
  size: number | null;
  mtimeNs: string | null;
  inode: number | null;
  remoteName: string | null;
  remoteId: string | null;
  reason: string | null;
  /** Planned credits. */
  credits: number;
  /** Sent as Idempotency-Key on every attempt of this operation (also after an unknown outcome). */
  idempotencyKey: string;
  state: OpState;
  /** Credits currently reserved for it (0 unless in_flight or unknown). */
  reserved: number;
  /** When the reservation was made: its UTC day and month are the periods its credits count in. */
  reservedAt: string | null;
  errorCode: string | null;
  error: string | null;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  /** An intelligence write's agent and entries; null for every other kind. */
  payload: IntelPayload | null;
};

/** Credit caps per period; Infinity means no cap. */
export type BudgetCaps = { run: number; day: number; month: number };
export type BudgetPeriod = 'run' | 'day' | 'month';
/** One number per budget period. */
export type PeriodCredits = { run: number; day: number; month: number };

/**
 * reserve()'s answer: admitted, or the first period (run, then day, then month) it would overrun. With
 * the PostgreSQL state only, `period: 'content'`: another runner of the dataset bought this upload's
 * content (`reused`: the op is settled done at no cost, tracked against that copy) or is buying it now
 * (`reused: null`: nothing changed; try again once it has settled, if `holderAlive`: a dead runner's claim
 * waits for the next runner of its sources to reconcile it).
 */
export type ReserveResult =
  | { ok: true }
  | { ok: false; period: BudgetPeriod; used: number; cap: number }
  | { ok: false; period: 'content'; reused: { remoteId: string; remoteName: string } | null; holderAlive: boolean };

/** What happened to a paid call; see settle(). */
export type SettleOutcome =
  | {
      outcome: 'done';
      /** Credits the server says it charged; null falls back to the planned credits. */
      creditsCharged: number | null;
      /** The remote file id (required for uploads). */
      remoteId?: string | null;
      remoteStatus?: RemoteStatus;
      /** The SHA-256 the server computed; when it differs from the op's, it is stored and the file re-hashed next pass. */
      remoteSha256?: string | null;
    }
  | { outcome: 'failed'; code: string; error: string }
  | { outcome: 'unknown'; code: string; error: string };

/** What an unknown operation turned out to be after checking the remote listing (null: not there). */
/** A tracked file whose remote copy's outcome is still to learn (queued, processing or unknown). */
export type UnsettledCopy = { source: string; path: string; remoteId: string; remoteStatus: RemoteStatus };

export type UnknownResolution = { remoteId: string; status: RemoteStatus } | null;

/** Credits per period for status and planning: used = spent + reserved, per the UTC day/month of now. */
export type CreditsUsed = PeriodCredits & {
  spent: PeriodCredits;
  reserved: PeriodCredits;
  utcDay: string;
  utcMonth: string;
};

/** Sums re-computed from the ledger rows; `reserved` is what is still reserved (reserve − release). */
export type LedgerSums = { reserved: number; spent: number };
export type LedgerTotals = {
  all: LedgerSums & { reserve: number; release: number; spend: number };
  byRun: Map<number, LedgerSums>;
  byDay: Map<string, LedgerSums>;
  byMonth: Map<string, LedgerSums>;
};

/**
 * running: not finished; done: finished (item failures are in the summary); stopped: ended early by a budget,
 * a limit or the remote refusing; failed: ended by an error; interrupted: found still running by the next open.
 */
export type RunStatus = 'running' | 'done' | 'stopped' | 'failed' | 'interrupted';

export type RunRecord = {
  id: number;
  command: string;
  status: RunStatus;
  startedAt: string;
  finishedAt: string | null;
  summary: unknown;
};

/** One file of the remote listing (the client's RemoteFile fits). */
export type RemoteListingEntry = { id: string; name: string; size: number | null; sha256: string | null; status: string };

/** What rebuildFromRemote did, in counts. */
export type RebuildReport = {
  /** Tracked rows written. */
  inserted: number;
  /** Names the mapper did not recognise (not ours, or from a source no longer configured). */
  unmapped: number;
  /** Entries without a SHA-256: they cannot be matched to local content and are left untracked. */
  withoutHash: number;
  /** Older entries of a name listed several times (a changed file's stale copies); the last listed wins. */
  superseded: number;
  /** Paths already tracked, left as they were. */
  kept: number;
};

/** Where an intelligence entry's processing stands, as far as kbsync knows (docs/api.md: pending → processed | failed). */
export type EntryStatus = 'pending' | 'processed' | 'failed' | 'unknown';

/** Content the dataset holds as an intelligence entry: one per SHA-256 of the content (the service's dedupe key). */
export type TrackedEntry = {
  sha256: string;
  agentId: string;
  /** The service's entry id; null when the write's outcome is not known yet. */
  remoteId: string | null;
  status: EntryStatus;
  /** The service's reason for a failed entry (from `intelligence.failed`). */
  error: string | null;
  /** Where it was first written from: `source`, and the path `file#key` as the plan shows it. */
  source: string | null;
  path: string | null;
  title: string | null;
  updatedAt: string;
};

/** A written entry to record: its content hash, the entry the service answered with, and where it came from. */
export type EntryRecord = {
  sha256: string;
  agentId: string;
  remoteId: string;
  status: string;
  /** Null for an entry adopted from the service's listing (written by someone else, or by a state since lost). */
  source: string | null;
  path: string | null;
  title: string | null;
};

/**
 * Where a remote copy comes from: the source and the path of the tracked file it was uploaded from, or
 * of the intelligence entry (`file#key`, `entry: true`) it was written from.
 */
export type TrackedOrigin = { source: string; path: string; entry?: true };

/** One webhook delivery the daemon accepted. */
export type WebhookEventRecord = {
  /** The `webhook-id` header. */
  id: string;
  /** The body's `type` (`intelligence.processed`, `dataset.mode_changed`, `webhook.test`...). */
  type: string;
  /** The `webhook-timestamp` header, unix seconds. */
  sentAtSec: number;
  receivedAtMs: number;
  /** The body's `data` for the recorded kinds, else null. */
  data: unknown;
};
