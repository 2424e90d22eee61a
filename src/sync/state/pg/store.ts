import type { Logger } from '../../../shared/logger.js';
import type { TrackedIndex } from '../../tracked/tracked-index.js';
import { trackedIndexOf } from './load.js';
import { rebuildPlan, type NameMapper } from '../rebuild.js';
import type { StateStore } from '../state-store.js';
import type { RebuildReport, RemoteListingEntry } from '../state-types.js';
import type { StateSnapshot } from '../snapshot.js';
import type { PgRunnerRecord } from './index.js';
import type { PgHandlers, PgOpenRequest } from './pg-worker.js';
import { startBridge } from './sync-bridge.js';
import type { PgTrackedSource } from './tracked.js';
import { redactUrl } from './url.js';
import { passPages } from '../pass-pages.js';
export { redactUrl } from './url.js';
export { isPostgresUrl } from '../../../shared/state-url.js';

const MAX_TX_ATTEMPTS = 5;

/** A worker handler as the main thread sees it through the bridge: the same arguments, its value at once. */
type Blocking<F> = F extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
type Method = keyof PgHandlers;

/** How openPgState opens. */
export type PgOpenOptions = {
  now?: () => Date;
  logger?: Pick<Logger, 'warn'>;
  /** Register as a runner (and recover what dead runners left); false for a read-only view. @default true */
  lock?: boolean;
  /** The sources this process syncs: it works only the outbox ops of this scope. @default "" */
  scope?: string;
};

/** A StateStore kept in PostgreSQL, shared by many runners; `runners()` lists them (kbsync status). */
export type PgStateStore = StateStore & {
  readonly kind: 'postgres';
  readonly runnerId: number | null;
  runners(): PgRunnerRecord[];
  /** The whole state as plain rows (kbsync state migrate). */
  exportSnapshot(): StateSnapshot;
  /** Writes a snapshot into this empty state as the work of one runner of this store's scope; `from` names where it came from. */
  importSnapshot(snapshot: StateSnapshot, from: string): void;
};

/**
 * Opens the PostgreSQL state at `url`: a worker thread owns the connection, every StateStore method
 * is a synchronous call to it (sync-bridge.ts), the schema is migrated at open (schema.ts) and,
 * unless `lock` is false, this process registers as a runner and recovers what dead runners left.
 */
export function openPgState(url: string, options: PgOpenOptions = {}): PgStateStore {
  const now = options.now ?? ((): Date => new Date());
  const request: PgOpenRequest = { scope: options.scope ?? '', register: options.lock !== false };
  const bridge = startBridge(url, request);
  // Checked by the compiler: a method the worker lacks, or other arguments or value, does not build.
  const call = <K extends Method>(method: K, ...args: Parameters<Blocking<PgHandlers[K]>>): ReturnType<Blocking<PgHandlers[K]>> =>
    bridge.call(method, args, now().getTime());
  let opened: ReturnType<Blocking<PgHandlers['open']>>;
  try {
    opened = call('open');
  } catch (err) {
    bridge.close();
    throw err;
  }
  const loadTrackedFiles = (): TrackedIndex =>
    trackedIndexOf({
      trackedSources: (onRun) => bridge.stream<PgTrackedSource>('streamTrackedSources', [], now().getTime(), onRun),
      trackedRowsOf: (source) => call('trackedRowsOf', source),
      trackedDetailsOf: (sourceId) => call('trackedDetailsOf', sourceId),
    });
  const rebuildFromRemote = (remoteFiles: readonly RemoteListingEntry[], mapName: NameMapper): RebuildReport => {
    const { report, files, older } = rebuildPlan(remoteFiles, mapName);
    return call('rebuildApply', files, report, older);
  };
  let closed = false;
  const fwd =
    <K extends Method>(method: K) =>
    (...args: Parameters<Blocking<PgHandlers[K]>>): ReturnType<Blocking<PgHandlers[K]>> =>
      call(method, ...args);
  const store: PgStateStore = {
    kind: 'postgres',
    path: redactUrl(url),
    isNew: opened.from === 0,
    lockTakenOver: null,
    recoveredInFlight: opened.recovered,
    readOnly: options.lock === false,
    runnerId: opened.runnerId,
    loadTrackedFiles,
    loadTrackedFilesSoon: () => Promise.resolve(loadTrackedFiles()),
    passTrackedFiles: () => passPages({ trackedSourceNames: () => call('trackedSourceNames'), trackedPage: fwd('trackedPage') }),
    getTracked: fwd('getTracked'),
    upsertTracked: fwd('upsertTracked'),
    upsertTrackedMany: fwd('upsertTrackedMany'),
    markDeleted: fwd('markDeleted'),
    removeTracked: fwd('removeTracked'),
    findBySha256: fwd('findBySha256'),
    setRemoteStatus: fwd('setRemoteStatus'),
    recordListing: fwd('recordListing'),
    trackedCount: fwd('trackedCount'),
    hasUnsettledRemote: fwd('hasUnsettledRemote'),
    unsettledCopies: fwd('unsettledCopies'),
    heldCopies: fwd('heldCopies'),
    rebuildFromRemote,
    remoteCheckPending: fwd('remoteCheckPending'),
    originsOfRemoteIds: fwd('originsOfRemoteIds'),
    trackedEntries: fwd('trackedEntries'),
    recordEntries: fwd('recordEntries'),
    setEntryStatus: fwd('setEntryStatus'),
    startRun: fwd('startRun'),
    finishRun: fwd('finishRun'),
    lastRun: fwd('lastRun'),
    getRun: fwd('getRun'),
    enqueue: fwd('enqueue'),
    enqueueMany: fwd('enqueueMany'),
    getOp: fwd('getOp'),
    pendingOps: fwd('pendingOps'),
    inFlightOps: fwd('inFlightOps'),
    abandonInFlight: fwd('abandonInFlight'),
    unknownOps: fwd('unknownOps'),
    openOpCounts: fwd('openOpCounts'),
    opsForPath: fwd('opsForPath'),
    cancelOp: fwd('cancelOp'),
    reserve: fwd('reserve'),
    settle: fwd('settle'),
    resolveUnknown: fwd('resolveUnknown'),
    creditsUsed: fwd('creditsUsed'),
    budgetWindow(caps, runId) {
      const u = store.creditsUsed(runId);
      return { caps: { ...caps }, used: { run: u.run, day: u.day, month: u.month } };
    },
    ledgerTotals: fwd('ledgerTotals'),
    verifyTotals: fwd('verifyTotals'),
    getMeta: fwd('getMeta'),
    setMeta: fwd('setMeta'),
    lastSyncedCommit: fwd('lastSyncedCommit'),
    setLastSyncedCommit: fwd('setLastSyncedCommit'),
    recordWebhookEvent: fwd('recordWebhookEvent'),
    pruneWebhookEvents: fwd('pruneWebhookEvents'),
    webhookEventSeen: fwd('webhookEventSeen'),
    webhookEvents: fwd('webhookEvents'),
    runners: fwd('runners'),
    exportSnapshot: fwd('exportSnapshot'),
    importSnapshot: (snapshot: StateSnapshot, from: string) => call('importSnapshot', snapshot, request.scope, from),
    diagnostics() {
      const d = call('diagnostics');
      return {
        schemaVersion: d.schemaVersion,
        journalMode: `postgresql ${d.server}`,
        synchronous: 2,
        foreignKeys: true,
        autoVacuum: 0,
        busyTimeoutMs: 0,
        pageSize: 0,
        pageCount: 0,
        freePages: 0,
      };
    },
    quickCheck: () => [],
    // PostgreSQL may end a transaction to break a deadlock (40P01) or a serialization conflict (40001):
    // nothing of it was written, so `fn` (which writes only through this store) runs again, a few times at most.
    transaction<T>(fn: () => T): T {
      for (let attempt = 1; ; attempt++) {
        call('begin');
        let value: T;
        try {
          value = fn();
          call('commit');
          return value;
        } catch (err) {
          try {
            call('rollback');
          } catch {
            // The transaction is gone already (a failed COMMIT): the error that ended it is the one to report.
          }
          const code = (err as { code?: unknown }).code;
          if ((code !== '40P01' && code !== '40001') || attempt >= MAX_TX_ATTEMPTS) throw err;
        }
      }
    },
    close() {
      if (closed) return;
      closed = true;
      bridge.close();
    },
  };
  return store;
}
