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
  /** Lowercase hex SHA-256; null when hashing was deferred (the file changed while it was read). */
  sha256: string | null;
};

/** Why a path a source saw is not even a candidate for upload. */
export type SkipReason = 'ignored' | 'secret' | 'unsupported' | 'symlink' | 'unreadable';

/** A path a source saw and left out, with its reason and a human detail ("matches .gitignore: drafts/"). */
export type SkippedPath = {
  source: string;
  path: string;
  reason: SkipReason;
  detail: string;
  /** Size in bytes when known (unsupported files are stat'ed; ignored directories are not). */
  size: number | null;
};

/** What one pass over all sources saw. */
export type Observation = {
  files: ObservedFile[];
  skipped: SkippedPath[];
  /** Per source: for git sources, the commit the file list was pinned to. */
  sources: { name: string; kind: 'folder' | 'git'; root: string; commit: string | null }[];
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
  | 'skip:unsupported'
  | 'skip:too-large'
  | 'skip:ignored'
  | 'skip:secret'
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
