import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { KnowledgeClient, RemoteFile } from '../../client/index.js';
import type { ResolvedConfig, Source } from '../../config/schema.js';
import { createConvertPool, type ConvertPool } from '../../convert/pool.js';
import { ConversionCache, type ConvertStage } from '../sources/converted.js';
import { staleConvertTypes } from './converter-versions.js';
import type { Logger } from '../../shared/logger.js';
import { deltaOf, planSync } from '../planner/index.js';
import { observeSources, WalkAhead, type ScopeDir } from '../sources/index.js';
import { UnchangedRows } from '../tracked/unchanged-rows.js';
import { unlistedRows, type UnlistedRows } from '../planner/unlisted.js';
import { convertTypeOf } from '../../shared/file-types.js';
import { toRemoteStatus, type BudgetCaps, type StateStore, type TrackedIndex, type UnsettledCopy } from '../state/index.js';
import type { ObservedFile, Observation, RemoteStatus, SkippedPath, SyncPlan, TrackedFile } from '../types.js';
import { isIntelligenceSource } from '../../config/source-kinds.js';
import { readIntelligenceSources, type EntryCandidate } from '../intelligence/read.js';
import { planEntries } from '../intelligence/plan-entries.js';
import { reconcileEntries } from '../intelligence/reconcile.js';
import { entryKey, type EntryContents } from '../intelligence/execute.js';
import { explainHeld, withoutHeld, type HeldBack } from './hold-back.js';
import { reconcileUnknown, type ReconcileReport } from './reconcile.js';
import { remoteNameMapper } from './remote-names.js';
import { localStatePath } from '../../shared/state-url.js';
import { SERVICE_DB_FILE } from '../../shared/service-db.js';

/** What a sync or a plan needs: the config, the open state, and a client opened only when needed. */
export type SyncDeps = {
  config: ResolvedConfig;
  state: StateStore;
  /** Opens (once) the client of the configured target; plans that need no remote call never open it. */
  getClient: () => Promise<KnowledgeClient>;
  logger: Logger;
  now?: () => Date;
};

/** A plan with what it was made from. */
/**
 * A delta pass (`kbsync watch`): the tracked index kept from the last cycle (null: read it now), and
 * the folders to look at (null: every source, whole). Unchanged files are counted, not planned (see
 * planner/delta.ts); a scoped pass leaves the refresh of unsettled remote copies to the full ones.
 */
export type DeltaPass = {
  tracked: TrackedIndex | null;
  scope: ReadonlyMap<string, readonly ScopeDir[]> | null;
  /**
   * Called with the rows (as written) of the copies this pass's listing found processed or failed that
   * were last seen queued, processing or unknown: the daemon logs and counts every settled copy.
   */
  onRemoteSettled?: (files: TrackedFile[]) => void;
  /** Called when this pass's listing settled unknown outcomes: the daemon counts the calls that went through. */
  onReconciled?: (report: ReconcileReport) => void;
  /** Of the pass's changed files, those to leave for a later pass (still being written), with why: planned `defer:changing`. */
  holdBack?: (files: readonly ObservedFile[]) => HeldBack;
  /**
   * Of a scoped pass: what an earlier whole pass found outside the scope, nothing there having moved
   * since (the daemon's plan answers): merged in, the plan is the whole pass's.
   */
  beside?: (tracked: TrackedIndex) => Beside;
};

/** What lies outside a scoped pass's folders (DeltaPass.beside): files and skip entries, rows vanished, and the count of unchanged files. */
export type Beside = { files: readonly ObservedFile[]; skipped: readonly SkippedPath[]; vanished: readonly number[]; unchanged: number };

export type PreparedPlan = {
  plan: SyncPlan;
  observation: Observation;
  /** The tracked files the plan was made from (a ReadonlyMap keyed by trackedKey). */
  tracked: TrackedIndex;
  /** The remote listing, when this pass fetched one. */
  listing: RemoteFile[] | null;
  /** Things done before planning, for people ("state rebuilt from the remote listing: 12 files"). */
  notes: string[];
  /** What the helper walking ahead gave the walk (listings, lstats, lstats the walk claimed); null when none ran. */
  walkAhead: WalkAhead['taken'] | null;
  /** The intelligence entries' content, by entryKey(source, path) (empty without intelligence sources). */
  entryContents: EntryContents;
  /** The unchanged files a full pass counted instead of planning (`countUnchanged`), by row of `tracked`; else null. */
  unlisted: UnlistedRows | null;
  /** Of a delta or counted pass over every source: its rows of `tracked` counted unchanged (1 each, by row) and found vanished; else null. */
  wholeDelta: { counted: Uint8Array; vanished: readonly number[] } | null;
};

/** Remote statuses still to learn the outcome of (StateStore.hasUnsettledRemote). */
const UNSETTLED: ReadonlySet<RemoteStatus> = new Set(['queued', 'processing', 'unknown']);

/** True for the embedded target before its first start: its data folder holds no service database yet. */
function embeddedNeverStarted(config: ResolvedConfig): boolean {
  return config.target.kind === 'embedded' && !existsSync(join(config.target.dataDir, SERVICE_DB_FILE));
}

/** The config's budget caps. */
export function capsOf(config: ResolvedConfig): BudgetCaps {
  const b = config.budget;
  return { run: b.maxCreditsPerRun, day: b.maxCreditsPerDay, month: b.maxCreditsPerMonth };
}

/**
 * Observes the sources and plans, after the repairs that need the remote listing: a state not yet
 * checked against the dataset (new, or recreated after a loss) is rebuilt from it, so nothing already in the dataset is bought again; operations whose
 * outcome is unknown are settled against it, so nothing is retried that went through; and, for a
 * sync, remote copies last seen queued or processing (sent without --wait) take their current status,
 * so a copy the service failed to process is reprocessed now rather than never. The listing is one
 * free GET /files/ (paged), made only when one of these needs it: a plan of a settled state stays offline.
 */
export async function preparePlan(
  deps: SyncDeps,
  runId: number | null,
  o: {
    onHashProgress?: (done: number, total: number) => void;
    delta?: DeltaPass;
    /** A full plan over this tracked index (the daemon's, kept in memory) instead of the state's rows. */
    tracked?: TrackedIndex;
    /**
     * Count the files unchanged since the state's record instead of planning them, as a delta pass
     * does (`plan`, `sync`): the walk drops each as its lstat comes, and the plan lists the rest;
     * PreparedPlan.unlisted gives their rows to a report that lists every item.
     */
    countUnchanged?: boolean;
  } = {},
): Promise<PreparedPlan> {
  const { config, state } = deps;
  const now = deps.now ?? (() => new Date());
  const notes: string[] = [];
  // Intelligence sources are read and planned apart (their files become entries, not uploads); the file
  // sources alone decide remote names, so adding an intelligence source renames no uploaded file.
  const fileSources = config.sources.filter((s) => !isIntelligenceSource(s));
  const intelSources = config.sources.filter(isIntelligenceSource);
  // Read beside the runner that holds the state: the repairs below are that runner's to make.
  if (state.readOnly) notes.push(...besideNotes(state));
  // Unknown writes are settled even when their source is gone from the config: their reservations must not stay held.
  if (!state.readOnly) notes.push(...(await reconcileEntries(state, deps.getClient, { adopt: intelSources.length > 0 })));
  let listing: RemoteFile[] | null = null;
  // True when a kept index was brought up to date with what the listing changed (see below).
  let keptThroughListing = false;
  // Not "created by this open": a state another command created empty, or whose first listing failed, still needs it.
  const rebuild = !state.readOnly && state.remoteCheckPending();
  const scope = o.delta?.scope ?? null;
  // The kept index answers from memory what the state answers with a scan of its rows.
  const unsettled = (): boolean => (o.delta?.tracked != null ? o.delta.tracked.hasRemoteStatus(UNSETTLED) : state.hasUnsettledRemote());
  const refresh = runId !== null && !rebuild && scope === null && unsettled();
  if (rebuild || (!state.readOnly && state.openOpCounts().unknown > 0) || refresh) {
    // An embedded service never started holds no file: nothing to list, and no service to start for it.
    listing = embeddedNeverStarted(config) ? [] : await (await deps.getClient()).listAllFiles();
    if (rebuild) {
      const rebuilt = state.rebuildFromRemote(listing, remoteNameMapper(fileSources.map((s) => s.name)));
      if (listing.length > 0)
        notes.push(`state rebuilt from the remote listing: ${rebuilt.inserted} files matched, ${rebuilt.unmapped} not ours`);
    }
    const reconciled = reconcileUnknown(state, listing);
    if (reconciled.found + reconciled.notFound > 0) {
      o.delta?.onReconciled?.(reconciled);
      notes.push(
        `unknown outcomes reconciled: ${reconciled.found} went through, ${reconciled.notFound} did not (will be retried with the same idempotency key)`,
      );
    }
    // After a rebuild too: the rows it made know a failed copy's status but not the service's reason.
    if (refresh || rebuild) {
      const statuses = new Map(listing.map((f) => [f.id, toRemoteStatus(f.status)]));
      const settling = refresh && o.delta?.onRemoteSettled !== undefined ? state.unsettledCopies() : [];
      state.recordListing(listing);
      if (settling.length > 0) reportSettled(state, settling, statuses, o.delta?.onRemoteSettled);
      // A listing fetched only for the statuses changed only their rows: a kept index takes those, not a whole read again.
      if (o.delta?.tracked != null && !rebuild && reconciled.found + reconciled.notFound === 0) {
        const tracked = o.delta.tracked;
        const changed = tracked.rowsWithOtherStatus(statuses).map((row) => tracked.fileAt(row));
        for (const f of changed) tracked.put(f.source, f.path, state.getTracked(f.source, f.path));
        keptThroughListing = true;
      }
    }
  }

  // A large state may be read in a worker thread while this one walks the folders (they meet in
  // observeSources). Read on this thread, it is read now, before the walk, on purpose: after the
  // walk, the same rows (then objects) cost a second major GC, in CPU and in the plan's time.
  // A large state means a large tree: a helper starts walking it now, on the core the state read
  // leaves idle (two cores), and the walk below takes what it found. Not for a new state: that walk
  // hashes as it goes (hashWhileWalking), and a walk that hands each file on as found lstats it itself.
  // A listing that rebuilt the state or settled outcomes may have changed any row: a kept index is read again.
  const kept = listing === null || keptThroughListing ? (o.delta?.tracked ?? o.tracked ?? null) : null;
  // The helper is there to walk while the state is read: with the index kept, nothing is read.
  const ahead = rebuild || kept !== null ? null : startWalkAhead(fileSources, state);
  const loading = kept !== null ? Promise.resolve(kept) : state.loadTrackedFilesSoon();
  // A damaged state rejects it; the error surfaces where it is awaited, not as an unhandled rejection.
  loading.catch(() => {});
  const converting = conversionStage(config, fileSources, state);
  // Counting reads the rows before the walk (the helper walks meanwhile); a new or rebuilt state has no fingerprints.
  const counting = o.countUnchanged === true && o.delta === undefined && o.tracked === undefined && !rebuild;
  let walked: UnchangedRows | null = null;
  let observation: Observation;
  try {
    // A full walk with the index kept drops the files it finds unchanged, as it goes (see UnchangedRows).
    const rows = counting ? await loading : o.delta !== undefined ? kept : null;
    if (rows !== null && scope === null) walked = new UnchangedRows(rows, staleDocuments(converting));
    observation = await observeSources(fileSources, {
      ...(converting !== null ? { convert: converting.stage } : {}),
      stateDir: dirname(localStatePath(config)),
      known: loading,
      lastSyncedCommit: (source, scope) => state.lastSyncedCommit(source, scope),
      // A new state (or one rebuilt from the listing, which keeps no stat fingerprints) hashes nearly
      // every file: hash them as the walk finds them.
      hashWhileWalking: rebuild,
      walkAhead: ahead,
      scope,
      // The daemon (a kept index) walks every few minutes: its lstat helper thread is kept between walks.
      ...(kept !== null ? { statPool: { keepHelper: true } } : {}),
      ...(walked !== null ? { unchanged: walked } : {}),
      ...(o.onHashProgress !== undefined ? { onHashProgress: o.onHashProgress } : {}),
    });
  } finally {
    ahead?.stop();
    await converting?.close();
  }
  const tracked = await loading;
  const split = o.delta !== undefined || counting ? splitDelta(observation, tracked, scope, walked, o.delta?.beside) : null;
  const unlisted = counting && split?.unlisted != null ? unlistedRows(tracked, split.unlisted) : null;
  const held = o.delta?.holdBack?.((split?.observation ?? observation).files) ?? new Map<string, string>();
  observation = withoutHeld(split?.observation ?? observation, held);
  const plan = planSync({
    observation,
    tracked,
    ...(split !== null ? { delta: split.delta } : {}),
    remote: listing,
    held: (sha256s) => state.heldCopies(sha256s),
    plan: config.target.plan,
    limits: { maxFileBytes: config.limits.maxFileBytes },
    uploadCost: config.target.uploadCost,
    budget: state.budgetWindow(capsOf(config), runId),
    reindexMinChangedFiles: config.reindex.minChangedFiles,
    maxReprocessAttempts: config.upload.maxReprocessAttempts,
    multiSource: fileSources.length > 1,
    now: now(),
  });
  explainHeld(plan, held);
  const entryContents = new Map<string, EntryCandidate>();
  if (intelSources.length > 0) {
    const read = await readIntelligenceSources(intelSources, dirname(localStatePath(config)));
    for (const e of read.entries) entryContents.set(entryKey(e.source, e.path), e);
    const entries = planEntries({
      observation: read,
      tracked: state.trackedEntries(),
      plan: config.target.plan,
      budget: plan.budget,
      plannedBefore: plan.totals.creditsPlanned,
    });
    plan.intelligence = entries;
    plan.totals.creditsPlanned += entries.totals.creditsPlanned;
    plan.totals.deferred += entries.totals.deferred;
    plan.totals.failed += entries.totals.failed;
    plan.budget.planned += entries.totals.creditsPlanned;
  }
  // A sync records what it does next: the rows' details (read from the state when first needed) must be read first.
  if (runId !== null) readBeforeWrites(tracked, plan, counting);
  if (ahead !== null) deps.logger.debug({ walkAhead: ahead.taken }, 'walk-ahead helper');
  const [walkAhead, wholeDelta] = [ahead?.taken ?? null, split?.whole ?? null];
  return { plan, observation, tracked, listing, notes, walkAhead, entryContents, unlisted, wholeDelta };
}

/**
 * Reads, before a sync writes, the details of the rows it will read: every row for an index kept
 * after the run (the daemon's), or listing every item. A counted CLI sync reads only the rows of its
 * items and of the paths they were renamed from (what recordFreeDecisions reads): the unchanged rest
 * are reported from their core columns, which hold no details.
 */
function readBeforeWrites(tracked: TrackedIndex, plan: SyncPlan, counted: boolean): void {
  if (!counted) return tracked.loadDetails();
  for (const item of plan.items) {
    tracked.find(item.source, item.path);
    if (item.renamedFrom !== undefined) tracked.find(item.renamedFrom.source, item.renamedFrom.path);
  }
}

/** A delta pass's observation (the files that may have changed), its delta, and the rows of the files it counted. */
function splitDelta(
  observation: Observation,
  tracked: TrackedIndex,
  scope: ReadonlyMap<string, readonly ScopeDir[]> | null,
  walked: UnchangedRows | null,
  beside: DeltaPass['beside'],
): Split {
  const scopeRows =
    scope === null ? null : [...scope].flatMap(([source, dirs]) => dirs.flatMap((d) => tracked.rowsUnder(source, d.dir, d.direct)));
  const split = deltaOf(observation.files, tracked, scopeRows, walked);
  const done: Split = {
    observation: { ...observation, files: split.files },
    delta: { vanished: split.vanished, unchanged: split.unchanged },
    unlisted: split.unlisted,
    whole: split.unlisted !== null ? { counted: split.unlisted, vanished: split.vanished } : null,
  };
  return scope !== null && beside !== undefined ? withBeside(done, beside(tracked)) : done;
}

type Split = {
  observation: Observation;
  delta: { vanished: number[]; unchanged: number };
  unlisted: Uint8Array | null;
  /** Of a pass over every source: the rows counted unchanged and found vanished (PreparedPlan.wholeDelta). */
  whole: PreparedPlan['wholeDelta'];
};

/** A scoped split with what lies beside its scope merged in (DeltaPass.beside). */
function withBeside(split: Split, beside: Beside): Split {
  const { observation, delta } = split;
  return {
    observation: {
      ...observation,
      files: [...observation.files, ...beside.files],
      skipped: [...observation.skipped, ...beside.skipped],
      inPathOrder: false,
    },
    delta: { vanished: [...delta.vanished, ...beside.vanished], unchanged: delta.unchanged + beside.unchanged },
    unlisted: null,
    whole: null,
  };
}

/** What a read-only plan leaves to the runner that holds the state, for people. */
function besideNotes(state: StateStore): string[] {
  const notes: string[] = [];
  if (state.remoteCheckPending()) notes.push('the state is not yet checked against the dataset; the runner holding it does that first');
  const { unknown } = state.openOpCounts();
  if (unknown > 0) notes.push(`${unknown} outcome(s) unknown, to be settled against the remote listing by the runner holding the state`);
  return notes;
}

/**
 * Below this state size the helper would not be ready in time: its start takes about as long as
 * the state read it overlaps takes at this size (some thousands of files), and until its first
 * listing comes the walk waits, so a small tree's walk is slower with a helper than alone.
 */
export const WALK_AHEAD_MIN_STATE_BYTES = 4 << 20;

/** A helper walking the folder sources ahead of the walk, when the state says the tree is large. */
function startWalkAhead(sources: ResolvedConfig['sources'], state: StateStore): WalkAhead | null {
  const { pageSize, pageCount } = state.diagnostics();
  if (pageSize * pageCount < WALK_AHEAD_MIN_STATE_BYTES) return null;
  const roots = sources.flatMap((s) => (s.git === undefined && s.path !== undefined ? [s.path] : []));
  return WalkAhead.start(roots);
}

/** The rows of the copies `before` (unsettled) that `statuses` says are processed or failed, handed to `report`. */
function reportSettled(
  state: StateStore,
  before: readonly UnsettledCopy[],
  statuses: ReadonlyMap<string, RemoteStatus>,
  report: ((files: TrackedFile[]) => void) | undefined,
): void {
  const files: TrackedFile[] = [];
  for (const copy of before) {
    const status = statuses.get(copy.remoteId);
    if (status !== 'processed' && status !== 'failed') continue;
    const file = state.getTracked(copy.source, copy.path);
    if (file !== null && file.remoteId === copy.remoteId) files.push(file);
  }
  if (files.length > 0) report?.(files);
}

/** True for a path whose document's converter changed (it is converted again, unchanged or not); null when none did. */
function staleDocuments(converting: { stage: ConvertStage } | null): ((path: string) => boolean) | null {
  const stale = converting?.stage.stale;
  if (stale === undefined || stale.size === 0) return null;
  return (path) => {
    const type = convertTypeOf(path);
    return type !== null && stale.has(type);
  };
}

/** The conversion step of a pass, when a source converts any type: the cache in the state's folder, threads started on first use. */
function conversionStage(
  config: ResolvedConfig,
  sources: readonly Source[],
  state: StateStore,
): { stage: ConvertStage; close(): Promise<void> } | null {
  if (!sources.some((s) => (s.convert ?? []).length > 0)) return null;
  let pool: ConvertPool | null = null;
  const stage: ConvertStage = {
    cache: new ConversionCache(dirname(localStatePath(config))),
    stale: staleConvertTypes(state),
    pool: () =>
      (pool ??= createConvertPool({ timeLimitMs: config.limits.convertSeconds * 1000, memoryLimitMb: config.limits.convertMemoryMb })),
  };
  return { stage, close: async () => pool?.close() };
}
