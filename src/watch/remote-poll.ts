import { errorText } from '../shared/errors.js';
import { processingErrorClass } from '../shared/processing-errors.js';
import { toRemoteStatus } from '../sync/state/index.js';
import type { TrackedIndex } from '../sync/tracked/tracked-index.js';
import type { RemoteStatus, TrackedFile } from '../sync/types.js';
import type { DaemonContext } from './context.js';

/** First wait before the listing is read after uploads; it doubles after each listing, up to REMOTE_POLL_MAX_MS. */
export const REMOTE_POLL_FIRST_MS = 2000;
export const REMOTE_POLL_MAX_MS = 5 * 60_000;

/** Copies sent and not yet processed or failed: what the poll waits for. */
const PROCESSING: ReadonlySet<RemoteStatus> = new Set(['queued', 'processing']);
const SETTLED: ReadonlySet<RemoteStatus> = new Set(['processed', 'failed']);

export type RemotePoll = {
  /** A cycle starts: the copies it sends are followed while it runs (see `sent`). */
  cycleStarts(): void;
  /** A copy the cycle running sent: the first of a cycle arms a listing 2 s later, during the cycle. */
  sent(source: string, path: string, remoteId: string): void;
  /** Copies whose processing ended that the cycle running found in its own listing: logged and counted as the poll's. */
  settledByCycle(files: readonly TrackedFile[]): void;
  /** The cycle's calls are over: no listing starts for it any more, and one in flight ends first. */
  cycleEnds(): Promise<void>;
  /** A cycle ended; `sent`: it uploaded or reprocessed something (new copies processing: the wait starts again short). */
  afterCycle(sent: boolean): void;
  /** Resolves once no listing is being read or applied: a cycle waits for it before it reads the kept index. */
  quiet(): Promise<void>;
  /** Stops the timer and waits for a listing in flight. */
  close(): Promise<void>;
};

export type RemotePollOptions = {
  /** The kept tracked index, brought up to date; null while none is kept (the poll then waits for the next cycle). */
  kept: () => Promise<TrackedIndex | null>;
  /** A failed copy the reprocess rule retries: the cycle the poll asks for then must look at it. */
  reprocess: (file: TrackedFile) => void;
  /** A listing failed (the target may be down): told before the poll backs off. */
  onFailure?: (err: unknown) => void;
  firstMs?: number;
  maxMs?: number;
};

/**
 * Between cycles, learns what the service made of the copies a cycle sent: while any is queued or
 * processing, one free listing (GET /files/, all of them at once) after 2 s, 4 s, 8 s... at most every
 * 5 min, again from 2 s once a cycle sends more. Each status seen is written to the state and the kept
 * index (as a full cycle's listing is), each settled file logged, a failure counted, and a failure the
 * reprocess rule retries (a code that may pass on a retry, attempts left) handed to a cycle started now:
 * the reprocess is a paid call like any other (outbox first, caps, rate). Never during a cycle.
 */
export function createRemotePoll(ctx: DaemonContext, o: RemotePollOptions): RemotePoll {
  const { deps, snapshot } = ctx;
  const { logger, state } = deps;
  const firstMs = o.firstMs ?? REMOTE_POLL_FIRST_MS;
  const maxMs = o.maxMs ?? REMOTE_POLL_MAX_MS;
  let delayMs = firstMs;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let closed = false;
  const sources = new Set(deps.config.sources.map((s) => s.name));
  // The copies the cycle running has sent and whose processing has not ended, by remote id.
  const sentInCycle = new Map<string, { source: string; path: string }>();
  let inCycle = false;

  const arm = (ms: number): void => {
    if (closed) return;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(tick, ms);
  };

  const tick = (): void => {
    timer = null;
    if (closed || ctx.lifetime.signal.aborted || inFlight !== null) return;
    // During a cycle only what it sent is looked for; afterCycle arms the poll of the kept index again.
    const running = ctx.scheduler.state().running;
    if (running && (!inCycle || sentInCycle.size === 0)) return;
    inFlight = (running ? pollInCycle() : poll())
      .catch((err: unknown) => {
        // Backs off as after a listing that found copies still processing: a target that is down is not asked every 2 s.
        delayMs = Math.min(delayMs * 2, maxMs);
        logger.warn({ err: errorText(err), retryInMs: delayMs }, 'reading the remote listing failed; trying again later');
        o.onFailure?.(err);
        arm(delayMs);
      })
      .finally(() => (inFlight = null));
  };

  const poll = async (): Promise<void> => {
    const index = await o.kept();
    if (index === null) return;
    const wanted = processingIds(index, sources);
    if (wanted.size === 0) {
      delayMs = firstMs;
      snapshot.remote = null;
      return;
    }
    const listing = await (await deps.getClient()).listAllFiles();
    const copies = listing.filter((f) => wanted.has(f.id));
    const statuses = new Map(copies.map((f) => [f.id, toRemoteStatus(f.status)]));
    // A plan the daemon is making over the kept index ends first; from here to the end nothing awaits.
    while (ctx.plans.computing !== null) await ctx.plans.computing;
    state.recordListing(copies);
    // Only the rows whose status moved are read again: the kept index stays what the state holds.
    const moved = index.rowsWithOtherStatus(statuses).map((row) => index.fileAt(row));
    // A plan answered before this listing is stale.
    if (moved.length > 0) ctx.plans.generation++;
    let retry = false;
    for (const before of moved) {
      const file = state.getTracked(before.source, before.path);
      index.put(before.source, before.path, file);
      if (file !== null && settled(file)) retry = true;
    }
    if (retry) ctx.scheduler.soon('reprocess');
    const left = processingIds(index, sources).size;
    delayMs = Math.min(delayMs * 2, maxMs);
    logger.debug({ copies: wanted.size, settled: wanted.size - left, nextInMs: left > 0 ? delayMs : null }, 'remote listing read');
    snapshot.remote = left > 0 ? { processing: left, nextListingAt: ctx.iso(ctx.nowMs() + delayMs) } : null;
    if (left > 0) arm(delayMs);
    else delayMs = firstMs;
    ctx.publish();
  };

  /**
   * During a long cycle: the listing read for the copies it sent, and those whose processing ended
   * written to the state only. The kept index is not touched while the cycle plans from it: the cycle
   * reads its items' rows again at its end (cycleEnds first waits for this listing).
   */
  const pollInCycle = async (): Promise<void> => {
    const listing = await (await deps.getClient()).listAllFiles();
    if (!inCycle) return;
    const ended = listing.filter((f) => sentInCycle.has(f.id) && SETTLED.has(toRemoteStatus(f.status)));
    state.recordListing(ended);
    let retry = false;
    for (const id of new Set(ended.map((f) => f.id))) {
      const at = sentInCycle.get(id) as { source: string; path: string };
      sentInCycle.delete(id);
      const file = state.getTracked(at.source, at.path);
      if (file !== null && file.remoteId === id && settled(file)) retry = true;
    }
    // The reprocess is the next cycle's, started once this one ends.
    if (retry) ctx.scheduler.soon('reprocess');
    delayMs = Math.min(delayMs * 2, maxMs);
    if (ended.length > 0) ctx.publish();
    if (sentInCycle.size > 0) arm(delayMs);
  };

  /**
   * Logs and counts a copy whose processing ended; true when the reprocess rule retries it. `byCycle`:
   * settled by a cycle's own listing, which plans the reprocess itself (nothing handed on).
   */
  const settled = (file: TrackedFile, byCycle = false): boolean => {
    const { source, path, remoteStatus, remoteError } = file;
    if (remoteStatus === 'processed') {
      snapshot.counters.processed++;
      logger.info({ source, path, remoteStatus }, 'remote processing done');
      return false;
    }
    if (remoteStatus !== 'failed') return false;
    snapshot.counters.failures++;
    // Read at each use: a config reload may change it between cycles.
    const max = deps.config.upload.maxReprocessAttempts;
    const permanent = processingErrorClass(remoteError) === 'permanent';
    const retry = !permanent && file.reprocessAttempts < max;
    const next = retry
      ? `reprocessed now (${file.reprocessAttempts + 1} of ${max})`
      : permanent
        ? 'not reprocessed: the service says the same file would fail again (fix the file: it is uploaded again when it changes)'
        : `not reprocessed: already reprocessed ${file.reprocessAttempts} of ${max} times`;
    logger.warn({ source, path, remoteStatus, error: remoteError ?? null, next }, 'remote processing failed');
    if (retry && !byCycle) o.reprocess(file);
    return retry;
  };

  return {
    cycleStarts() {
      inCycle = true;
      sentInCycle.clear();
    },
    sent(source, path, remoteId) {
      if (!inCycle) return;
      sentInCycle.set(remoteId, { source, path });
      if (sentInCycle.size > 1) return;
      delayMs = firstMs;
      arm(firstMs);
    },
    settledByCycle(files) {
      for (const file of files) settled(file, true);
    },
    async cycleEnds() {
      inCycle = false;
      sentInCycle.clear();
      await inFlight;
    },
    afterCycle(sent) {
      if (sent) delayMs = firstMs;
      if (sent || timer === null) arm(delayMs);
    },
    quiet: async () => {
      await inFlight;
    },
    async close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await inFlight;
    },
  };
}

/**
 * The remote ids of the index's copies still queued or processing, of `sources` only: on a shared
 * (PostgreSQL) state, another runner's copies are its own to follow.
 */
function processingIds(index: TrackedIndex, sources: ReadonlySet<string>): Set<string> {
  const ids = new Set<string>();
  for (let row = 0; row < index.size; row++) {
    const id = index.remoteIdAt(row);
    if (id !== null && PROCESSING.has(index.remoteStatusAt(row) as RemoteStatus) && sources.has(index.fileAt(row).source)) ids.add(id);
  }
  return ids;
}
