import type { ConvertType } from '../shared/file-types.js';
import type { Plan, UploadCostRule } from '../shared/plans.js';

/**
 * The vocabulary shared by the sync pipeline: observe (sources) → plan (pure) → outbox/execute → record (state).
 * Paths are POSIX, relative to their source root, never starting with "/" or "..".
 */

/** A supported file found in a source, with its stat fingerprint and (when known) its content hash. */
export type ObservedFile = {
  source: string;
  path: string;
  /** Absolute path on disk (for hashing and upload). */
  absPath: string;
  size: number;
  /** Modification time in nanoseconds since the epoch, as a decimal string (fits no JS number). */
  mtimeNs: string;
  inode: number;
  /**
   * Lowercase hex SHA-256; null when hashing was deferred (the file changed while it was read). For a
   * converted document, the SHA-256 of its Markdown: the content key that is priced and deduplicated.
   */
  sha256: string | null;
  /** Set when this pass converted the file (or found its conversion cached): what is uploaded instead of it. */
  converted?: ConvertedFile;
};

/** A document converted to Markdown (sources/converted.ts): the Markdown is what is priced and uploaded. */
export type ConvertedFile = {
  type: ConvertType;
  /** The Markdown's size in bytes (the upload's size, which prices it). */
  markdownBytes: number;
  /** Pages, slides, sheets or chapters converted. */
  units: number;
  /** The SHA-256 of the document's own bytes. */
  originalSha256: string;
  /** Converted again because kbsync's converter of this type changed since the state's Markdown was made. */
  newConverter?: true;
};

/** Why a path a source saw is not even a candidate for upload. */
export type SkipReason =
  | 'ignored'
  | 'secret'
  | 'unsupported'
  | 'symlink'
  | 'unreadable'
  | 'bad-name'
  /** A document of a type in `convert:` that is not converted: encrypted, no text layer, damaged. */
  | 'encrypted'
  | 'no-text'
  | 'convert-failed';

/** A path a source saw and left out, with its reason and a human detail ("matches .gitignore: drafts/"). */
export type SkippedPath = {
  source: string;
  path: string;
  reason: SkipReason;
  detail: string;
  /** Size in bytes when known (skipped paths are not stat'ed, except unsupported files reached through a followed link). */
  size: number | null;
};

/** What one pass over all sources saw. */
export type Observation = {
  files: ObservedFile[];
  skipped: SkippedPath[];
  /**
   * Per source: for git sources, the commit the file list was pinned to, and the scope it was listed
   * in (url and subdir: a path names another file when either changes).
   */
  sources: { name: string; kind: 'folder' | 'git'; root: string; commit: string | null; scope: string | null }[];
  /**
   * True when the files are known to be strictly in (source, path) order, one per path (folder walks
   * deliver them so): the planner then need not check. Absent or false: it checks.
   */
  inPathOrder?: boolean;
};

/** The remote processing status of an uploaded file, as far as the sync side knows it. */
export type RemoteStatus = 'queued' | 'processing' | 'processed' | 'failed' | 'unknown';

/** A file the state database tracks: the last thing kbsync knows it sent (or decided about). */
export type TrackedFile = {
  source: string;
  path: string;
  size: number;
  mtimeNs: string;
  inode: number;
  sha256: string;
  /** The file's name on the service (source-relative path, prefixed "source/" when several sources). */
  remoteName: string;
  remoteId: string | null;
  remoteStatus: RemoteStatus | null;
  reprocessAttempts: number;
  /** The service's reason when remoteStatus is 'failed' (shown in plans and `kbsync explain`). */
  remoteError?: string | null;
  /** How many chunks the service listed for the remote copy (read with a file's row; absent until listed). */
  remoteChunks?: number | null;
  lastAction: string | null;
  lastReason: string | null;
  updatedAt: string;
};

/** Every action a planned item can get. */
export type PlanAction =
  | 'upload'
  | 'skip:unchanged'
  | 'skip:duplicate-content'
  | 'rename'
  /** The content is a copy the dataset holds that no tracked path points at (an edit undone, a commit checked out again). */
  | 'reuse'
  /** A 0-byte file: nothing to learn from, not worth an upload. */
  | 'skip:empty'
  | 'skip:unsupported'
  | 'skip:too-large'
  | 'skip:ignored'
  | 'skip:secret'
  /** The source could not read the path (permissions, vanished mid-walk). */
  | 'skip:unreadable'
  /** A name that is not valid UTF-8 (its path shows each bad byte as `\xHH`): rename it to sync it. */
  | 'skip:bad-name'
  /** An encrypted or password-protected document of a type in `convert:`: nothing to read without the password. */
  | 'skip:encrypted'
  /** A PDF with no text layer (scanned): kbsync does not run OCR. */
  | 'skip:no-text'
  /** A document that could not be converted (damaged, truncated, not what its extension says, past a limit). */
  | 'skip:convert-failed'
  /** Remote processing failed and upload.maxReprocessAttempts is used up: counted as failed. */
  | 'skip:remote-failed'
  | 'defer:over-budget'
  | 'defer:changing'
  | 'reprocess'
  | 'deleted';

/** Credit spending limits per period, and what is already spent or reserved in each. */
export type BudgetWindow = {
  caps: { run: number; day: number; month: number };
  /** Spent plus reserved (not yet settled) credits in each period, before this plan. */
  used: { run: number; day: number; month: number };
};

/** The three budget periods, in the order the planner checks them. */
export type BudgetPeriod = 'run' | 'day' | 'month';

/** One file of the remote listing (`GET /files/`), as much as planning needs; the client's RemoteFile fits. */
export type RemoteCopy = {
  id: string;
  name: string;
  sha256: string | null;
  status: string;
};

/**
 * A copy the dataset holds that no tracked path points at any more: a path's earlier content, kept when
 * the path moved on (the API has no delete). The state records it (StateStore.heldCopies); the planner
 * points a path back at it when the path's content is that again.
 */
export type HeldCopy = { remoteId: string; sha256: string; remoteName: string; status: RemoteStatus | null };

/** Everything planSync needs; it reads nothing else (no fs, no database, no network, no clock). */
export type PlanInput = {
  observation: Observation;
  /** Tracked files keyed by `trackedKey(source, path)` (`source + "\0" + path`). */
  tracked: ReadonlyMap<string, TrackedFile>;
  /** The remote listing when it was fetched (null: not fetched; duplicates are then found from state only). */
  remote: readonly RemoteCopy[] | null;
  /**
   * The copies the dataset holds that no tracked path points at, of the given contents (absent: none known).
   * Asked once, with the candidates' hashes, only when some file is a candidate (the state's table may be long).
   */
  held?: (sha256s: readonly string[]) => readonly HeldCopy[];
  plan: Plan;
  limits: { maxFileBytes: number | null };
  /** How the service prices an upload (target.uploadCost). @default docs/api.md's: 5 + 1 per started MiB over 5 MiB */
  uploadCost?: UploadCostRule;
  budget: BudgetWindow;
  reindexMinChangedFiles: number;
  maxReprocessAttempts: number;
  /** True when several sources are configured: remote names are then `source/path`. */
  multiSource: boolean;
  now: Date;
  /**
   * A delta plan (see planner/delta.ts, `kbsync watch`): `observation.files` holds only the files that
   * may have changed (new, or not unchanged by fingerprint), `tracked` is a TrackedIndex, `vanished` its
   * rows of the plan's scope that no observed file matched (the planner's deletes and rename sources:
   * rows outside the scope are left alone), and `unchanged` counts the files left out as unchanged.
   */
  delta?: { vanished: readonly number[]; unchanged: number };
};

/** One decision of a plan: what happens to one path, why, and what it costs. */
export type PlanItem = {
  source: string;
  path: string;
  action: PlanAction;
  /** One line for people: "new file", "over the basic plan's 100 MB limit (file is 120.3 MB)". */
  reason: string;
  /** Credits this item is planned to spend: > 0 only for admitted `upload` and `reprocess`. */
  credits: number;
  /** Bytes: observed size, else the tracked size; null when unknown (e.g. an ignored directory). */
  size: number | null;
  /** Content hash: observed, else tracked; null when unknown (deferred, skipped). */
  sha256: string | null;
  /** The name on the service: an upload's new name, or the existing copy's name (unchanged, rename, reprocess, deleted). */
  remoteName: string;
  /** The existing remote copy this item is about (unchanged, reprocess, rename, reuse, deleted, duplicate-content); null when none. */
  remoteId: string | null;
  /** What the item would cost if it ran (set on `defer:over-budget`, `upload`, `reprocess`). */
  cost?: number;
  /** The budget period that stopped a `defer:over-budget` item. */
  deferredBy?: BudgetPeriod;
  /** The paid action a `defer:over-budget` item is waiting to do. */
  deferredAction?: 'upload' | 'reprocess';
  /** Changed files: the hash that was synced before. */
  previousSha256?: string;
  /** Changed files: the previous remote copy, which stays (the API has no delete or replace) and becomes stale. */
  previousRemoteName?: string;
  staleRemoteId?: string | null;
  /** `rename`: where the content was tracked before; the state moves that row here. */
  renamedFrom?: { source: string; path: string };
  /** `skip:duplicate-content`: the copy that already holds this content (or will, when `inThisRun`). */
  duplicateOf?: { name: string; remoteId: string | null; inThisRun: boolean };
  /**
   * `skip:remote-failed` of content this path did not hold: the copy of the same bytes whose processing
   * failed for good (a parse failure), which the path is tracked against from now on; nothing is bought.
   */
  failedCopy?: { name: string; remoteId: string; error: string };
  /** `reuse`: the held copy the path now points at, and its last known remote status. */
  reuses?: { remoteId: string; name: string; status: RemoteStatus };
  /** `skip:too-large`: the limit applied, and where it came from. */
  limitBytes?: number;
  /** `reprocess`: which attempt this is (1-based). */
  reprocessAttempt?: number;
  /** True when this path was tracked before this plan. */
  wasTracked?: boolean;
  /** `deleted`: the state recorded this deletion, for this reason, before this plan (no news: the daemon logs it once). */
  deletedBefore?: boolean;
  /**
   * `skip:unchanged` found in the remote listing: a copy under this very name with this content
   * (`remoteId`), and its status there. The state then tracks that copy, whatever it tracked before.
   */
  adoptedStatus?: string;
};

/** The `--json` summary: counts of items by outcome, and credits. Every item lands in exactly one count. */
export type PlanTotals = {
  /** upload and reprocess (planned, or done in a run). */
  uploaded: number;
  unchanged: number;
  renamed: number;
  /** skip:* other than unchanged and remote-failed, plus deleted. */
  skipped: number;
  /** defer:* (and, in a run, paid items the run did not reach). */
  deferred: number;
  /** skip:remote-failed (and, in a run, calls that failed or whose outcome is unknown). */
  failed: number;
  creditsPlanned: number;
  creditsSpent: number;
};

/** Whether the plan ends with a reindex. */
export type ReindexDecision = {
  /** Changed files (admitted upload + reprocess) reached reindex.minChangedFiles. */
  wanted: boolean;
  /** The tier allows it and (when wanted) the budget has room: run it iff wanted && allowed. */
  allowed: boolean;
  /** What stopped it: the plan's tier, a budget period, or nothing. */
  blockedBy: 'tier' | BudgetPeriod | null;
  reason: string;
  /** 2 when it will run, else 0. */
  credits: number;
  changedFiles: number;
  minChangedFiles: number;
};

/** The output of planSync. */
export type SyncPlan = {
  kind: 'plan';
  /** `now` of the input, ISO 8601. */
  plannedAt: string;
  /** Sorted by source, then path (code-unit order). */
  items: PlanItem[];
  totals: PlanTotals;
  counts: Record<PlanAction, number>;
  reindex: ReindexDecision;
  limits: { plan: Plan; planMaxFileBytes: number; maxFileBytes: number | null; effectiveMaxFileBytes: number };
  /** The upload price the plan counted with (target.uploadCost). */
  uploadCost: UploadCostRule;
  /** The budget as given, and the credits this plan admits in total (items + reindex + intelligence entries). */
  budget: BudgetWindow & { planned: number };
  /** The intelligence sources' entries (`as: intelligence`); absent when none is configured. */
  intelligence?: IntelPlan;
  /** A delta plan (PlanInput.delta): the unchanged files counted in totals.unchanged that are not in `items`. */
  unchangedNotListed?: number;
};

/** What happens to one intelligence entry (or a record that could not be read: `invalid`). */
export type EntryAction = 'write' | 'skip:unchanged' | 'skip:duplicate-content' | 'skip:unsupported' | 'defer:over-budget' | 'invalid';

/** One entry of an intelligence source: where it is, what happens to it, why, and what it costs. */
export type EntryItem = {
  source: string;
  /** `file#key` (`faq.jsonl#3`, `runbook.md#deploys`); an invalid record is `file:line`; an unsupported file its path. */
  path: string;
  action: EntryAction;
  reason: string;
  /** 1 for an admitted write, else 0. */
  credits: number;
  /** SHA-256 of the content (the service's dedupe key); null for an invalid record. */
  sha256: string | null;
  agentId: string;
  title: string | null;
  /** The service's entry id, when the dataset holds the content. */
  remoteId: string | null;
  /** Line of the file where the entry starts. */
  line: number;
  /** Run only: how it ended. */
  outcome?: RunOutcome;
  creditsCharged?: number;
  error?: string | null;
};

/** Counts of an intelligence plan (or run): every entry lands in exactly one. */
export type EntryTotals = {
  written: number;
  unchanged: number;
  duplicate: number;
  /** Files of the source no intelligence source reads (not JSONL, JSON, YAML, CSV or Markdown). */
  skipped: number;
  deferred: number;
  /** Records that could not be read, and (in a run) writes that failed or whose outcome is unknown. */
  failed: number;
  creditsPlanned: number;
  creditsSpent: number;
};

/** The intelligence part of a plan: its entries, how they are sent, and their totals. */
export type IntelPlan = {
  items: EntryItem[];
  /** `batch`: up to 50 entries a call (Advanced tier); `single`: one a call. */
  mode: 'batch' | 'single';
  totals: EntryTotals;
};

/** How one item of a run ended. */
export type RunOutcome =
  /** The paid call succeeded, or a free decision was recorded. */
  | 'done'
  /** The call failed (the server's reason is in `error`). */
  | 'failed'
  /** No answer (timeout, lost response): reconciled against the remote listing next time. */
  | 'unknown'
  /** The run stopped before reaching it (budget at reservation time, shutdown). */
  | 'not-run';

/** One item of a finished run: its plan item plus what happened. */
export type RunItem = PlanItem & { outcome: RunOutcome; creditsCharged: number; error: string | null };

/** The result of a run, for reports (`kbsync sync --json`). */
export type RunResult = {
  kind: 'run';
  startedAt: string;
  finishedAt: string;
  items: RunItem[];
  totals: PlanTotals;
  reindex: ReindexDecision & { outcome: RunOutcome; creditsCharged: number; error: string | null };
  intelligence?: IntelPlan;
};
