import type { BudgetWindow, HeldCopy, RemoteStatus, TrackedFile } from '../types.js';
import type { LockOwner } from './sqlite/lock-file.js';
import type { NameMapper } from './rebuild.js';
import type {
  BudgetCaps,
  CreditsUsed,
  EntryRecord,
  EntryStatus,
  LedgerTotals,
  NewOp,
  OutboxOp,
  RebuildReport,
  RemoteListingEntry,
  ReserveResult,
  RunRecord,
  RunStatus,
  SettleOutcome,
  TrackedEntry,
  TrackedOrigin,
  UnknownResolution,
  UnsettledCopy,
  WebhookEventRecord,
} from './state-types.js';
import type { ListedCopy, TrackedFileInput } from '../tracked/fields.js';
import type { TrackedIndex } from '../tracked/tracked-index.js';

/** The sync state database. Every method is synchronous; each write is its own transaction unless inside transaction(). */
export type StateStore = {
  /** The state path as given to openState. */
  readonly path: string;
  /** True when this open created the schema. Whether to rebuild from the listing is remoteCheckPending(), which outlives this open. */
  readonly isNew: boolean;
  /** The dead kbsync whose stale lock this open took over, or null. */
  readonly lockTakenOver: LockOwner | null;
  /** Operations a crashed process left in flight, turned 'unknown' by this open (reconcile before planning). */
  readonly recoveredInFlight: number;
  /** True for an open that only reads, beside the runner that holds the state: repairs are that runner's. */
  readonly readOnly: boolean;

  // tracked files
  /** Every tracked file, in (source, path) order, readable as a ReadonlyMap keyed by trackedKey(source, path). */
  loadTrackedFiles(): TrackedIndex;
  /**
   * loadTrackedFiles(), read in a worker thread where one can run and the state is large enough to
   * be worth it, so that the caller can walk the sources meanwhile. Nothing may write tracked files
   * before it resolves (its rows are a snapshot).
   */
  loadTrackedFilesSoon(): Promise<TrackedIndex>;
  /**
   * Every tracked file in (source, path) order, read as the pass goes and kept by nobody: a report over
   * a state of any size (status, the page) without holding one object per file.
   */
  passTrackedFiles(): Iterable<TrackedFile>;
  getTracked(source: string, path: string): TrackedFile | null;
  upsertTracked(file: TrackedFileInput): void;
  upsertTrackedMany(files: readonly TrackedFileInput[]): void;
  markDeleted(source: string, path: string, reason?: string): boolean;
  removeTracked(source: string, path: string): boolean;
  findBySha256(sha256: string): TrackedFile[];
  setRemoteStatus(remoteId: string, status: RemoteStatus): number;
  /**
   * Records what the service's listing says of these copies in the rows holding them (the `listed`
   * fields of tracked/fields.ts: status, a failed copy's reason, chunk count) and in the held copies'
   * statuses; returns tracked rows changed.
   */
  recordListing(copies: readonly ListedCopy[]): number;
  /**
   * Files tracked in their source now: rows of files deleted locally are not counted (`kbsync status`
   * neither). `remoteStatus`: only those whose remote copy has it.
   */
  trackedCount(remoteStatus?: RemoteStatus): number;
  hasUnsettledRemote(): boolean;
  /** The tracked files whose remote copy's outcome is still to learn (the rows hasUnsettledRemote looks for). */
  unsettledCopies(): UnsettledCopy[];
  /** Remote copies the dataset holds that no tracked file points at any more (a path's content before it changed): all, or those of these contents. */
  heldCopies(sha256s?: readonly string[]): HeldCopy[];
  rebuildFromRemote(remoteFiles: readonly RemoteListingEntry[], mapName: NameMapper): RebuildReport;
  /** True until a rebuild from the remote listing has matched this (empty when created) state against the dataset. */
  remoteCheckPending(): boolean;
  /** The tracked file each remote id was uploaded from (query and chat results); unknown ids are absent. */
  originsOfRemoteIds(remoteIds: readonly string[]): Map<string, TrackedOrigin>;

  // runs
  startRun(command: string): number;
  finishRun(runId: number, status: Exclude<RunStatus, 'running' | 'interrupted'>, summary: unknown): void;
  lastRun(command?: string): RunRecord | null;
  getRun(runId: number): RunRecord | null;

  // outbox and budget
  enqueue(op: NewOp): number;
  enqueueMany(ops: readonly NewOp[]): number[];
  getOp(opId: number): OutboxOp | null;
  pendingOps(): OutboxOp[];
  inFlightOps(): OutboxOp[];
  unknownOps(): OutboxOp[];
  /** How many operations are pending and how many unknown (counted, not loaded: a first sync queues one per file). */
  openOpCounts(): { pending: number; unknown: number };
  /**
   * After a failed sync of this process, once none of its calls is under way: its ops still in flight
   * (their outcome could not be written) become unknown, to be reconciled before any retry, and its
   * runs still marked running are interrupted. Returns how many ops.
   */
  abandonInFlight(): number;
  opsForPath(source: string, path: string): OutboxOp[];
  cancelOp(opId: number, why?: string): void;
  reserve(opId: number, caps: BudgetCaps, runId: number): ReserveResult;
  settle(opId: number, outcome: SettleOutcome): void;
  resolveUnknown(opId: number, found: UnknownResolution): void;
  creditsUsed(runId: number | null): CreditsUsed;
  budgetWindow(caps: BudgetCaps, runId: number | null): BudgetWindow;
  ledgerTotals(): LedgerTotals;
  verifyTotals(): string[];

  // meta
  getMeta(key: string): string | null;
  setMeta(key: string, value: string | null): void;
  lastSyncedCommit(source: string, scope: string): string | null;
  setLastSyncedCommit(source: string, commit: string, scope: string): void;

  // webhook deliveries (kbsync watch --http)
  /** Records an accepted delivery; false (nothing written) when its id was recorded before: a replay. */
  recordWebhookEvent(event: WebhookEventRecord): boolean;
  webhookEventSeen(id: string): boolean;
  /** The newest accepted deliveries first. */
  webhookEvents(limit?: number): WebhookEventRecord[];
  /** Drops accepted deliveries past the retention (30 days, 10,000 rows; never one a replay of which would still pass as fresh); returns how many. */
  pruneWebhookEvents(): number;

  // intelligence entries (sources with `as: intelligence`)
  /** Every entry the dataset is known to hold, keyed by the SHA-256 of its content. */
  trackedEntries(): Map<string, TrackedEntry>;
  /** Records written entries (inside the transaction that settles their write). */
  recordEntries(entries: readonly EntryRecord[]): void;
  /** Sets the status of the entry with this service id; returns how many rows changed. */
  setEntryStatus(remoteId: string, status: EntryStatus, error: string | null): number;

  /** Connection settings and size figures (for status and tests). */
  diagnostics(): StateDiagnostics;
  /** SQLite's quick_check: [] when the database is sound, else the problems it lists. */
  quickCheck(): string[];
  /** Runs `fn` in one IMMEDIATE transaction (one disk sync for many writes; nested calls become savepoints). */
  transaction<T>(fn: () => T): T;
  /** Closes the database and releases the lock; safe to call twice. */
  close(): void;
};

/** What diagnostics() reports. */
export type StateDiagnostics = {
  schemaVersion: number;
  journalMode: string;
  /** 2 is FULL. */
  synchronous: number;
  foreignKeys: boolean;
  /** 2 is INCREMENTAL. */
  autoVacuum: number;
  busyTimeoutMs: number;
  pageSize: number;
  pageCount: number;
  freePages: number;
};
