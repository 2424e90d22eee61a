import type { Database } from 'better-sqlite3';
import type { RemoteStatus } from '../../types.js';
import { createBudget } from './budget.js';
import { createHeldCopies } from './held-copies.js';
import { createLedgerAudit } from './ledger-audit.js';
import type { LockOwner } from './lock-file.js';
import { createMeta } from './meta.js';
import { createOutbox } from './outbox.js';
import type { NameMapper } from '../rebuild.js';
import { rebuildFromRemote } from './rebuild.js';
import { createRemotePaths } from './remote-paths.js';
import { createRuns } from './runs.js';
import { createSourceIds } from './sources.js';
import { guardCorruption } from './errors.js';
import type { RemoteListingEntry } from '../state-types.js';
import type { StateDiagnostics, StateStore } from '../state-store.js';
import { createTrackedFiles } from './tracked.js';
import { passPages } from '../pass-pages.js';
import { readBulkInWorker, worthAWorker } from './load.js';
import { createWebhookEvents } from './webhook-events.js';
import { createIntelEntries } from './entries.js';
import { listedStatuses, type ListedCopy } from '../../tracked/fields.js';

type Open = {
  db: Database;
  label: string;
  now: () => Date;
  isNew: boolean;
  lockTakenOver: LockOwner | null;
  recover: boolean;
  /** When the oldest live guest came (read inside the recovery's transaction), or null: none. */
  oldestGuestMs?: () => number | null;
  readOnly?: boolean;
  onClose: () => void;
};

/** The SQLite StateStore: wires the table modules over an open, migrated database (open.ts opens it). */
export function createStateStore(o: Open): StateStore {
  const { db, now } = o;
  const nowMs = (): number => now().getTime();
  const sources = createSourceIds(db);
  const tracked = createTrackedFiles(db, sources, nowMs);
  const outbox = createOutbox(db, sources, nowMs);
  const runs = createRuns(db, nowMs);
  const meta = createMeta(db);
  const budget = createBudget(db, { outbox, tracked, sources, meta, now });
  const audit = createLedgerAudit(db);
  const webhookEvents = createWebhookEvents(db, nowMs);
  const intelEntries = createIntelEntries(db, sources, nowMs);
  const held = createHeldCopies(db, sources);
  const tidy = (): void => {
    outbox.pruneSettled();
    webhookEvents.pruneWebhookEvents();
    db.pragma('incremental_vacuum');
  };

  // Only the lock holder may decide that the process behind an in-flight call or a running run is dead.
  let recoveredInFlight = 0;
  if (o.recover) {
    // Read inside the transaction: a guest that comes later starts its run after this recovery.
    recoveredInFlight = db
      .transaction(() => {
        const spared = o.oldestGuestMs?.() ?? Number.MAX_SAFE_INTEGER;
        runs.interruptRunning(spared);
        return outbox.recoverInFlight(spared);
      })
      .immediate();
    tidy();
  }

  const { writeTracked: _write, writeTrackedIfNew: _writeNew, ...trackedApi } = tracked;
  const { rowOf: _row, recoverInFlight: _recover, pruneSettled: _prune, ...outboxApi } = outbox;
  const { interruptRunning: _interrupt, ...runsApi } = runs;
  let closed = false;
  const api = {
    ...trackedApi,
    ...outboxApi,
    ...runsApi,
    // A finished run's done and cancelled ops are deleted: files and ledger keep their outcome.
    finishRun: (...args: Parameters<typeof runs.finishRun>): void => {
      runs.finishRun(...args);
      tidy();
    },
    ...budget,
    ...audit,
    ...meta,
    ...webhookEvents,
    ...intelEntries,
    ...createRemotePaths(db),
    heldCopies: held.heldCopies,
    // The recovery of an open, run again by the lock holder (a guest's calls still spared).
    abandonInFlight: (): number =>
      db
        .transaction(() => {
          const spared = o.oldestGuestMs?.() ?? Number.MAX_SAFE_INTEGER;
          runs.interruptRunning(spared);
          return outbox.recoverInFlight(spared);
        })
        .immediate(),
    // A held copy's status is kept current with the tracked rows' (a copy left while queued may fail later).
    setRemoteStatus: (remoteId: string, status: RemoteStatus): number =>
      db.transaction(() => (held.setHeldStatuses(new Map([[remoteId, status]])), tracked.setRemoteStatus(remoteId, status)))(),
    recordListing: (copies: readonly ListedCopy[]): number =>
      db.transaction(() => (held.setHeldStatuses(listedStatuses(copies)), tracked.recordListing(copies)))(),
    rebuildFromRemote: (remoteFiles: readonly RemoteListingEntry[], mapName: NameMapper) =>
      rebuildFromRemote(db, { tracked, held, meta, nowMs }, remoteFiles, mapName),
    diagnostics: (): StateDiagnostics => {
      const num = (pragma: string): number => db.pragma(pragma, { simple: true }) as number;
      return {
        schemaVersion: num('user_version'),
        journalMode: db.pragma('journal_mode', { simple: true }) as string,
        synchronous: num('synchronous'),
        foreignKeys: num('foreign_keys') === 1,
        autoVacuum: num('auto_vacuum'),
        busyTimeoutMs: num('busy_timeout'),
        pageSize: num('page_size'),
        pageCount: num('page_count'),
        freePages: num('freelist_count'),
      };
    },
    quickCheck: (): string[] => {
      const rows = db.pragma('quick_check', { simple: false }) as { quick_check: string }[];
      return rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
    },
    transaction: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    close: () => {
      if (closed) return;
      closed = true;
      try {
        db.close();
      } finally {
        o.onClose();
      }
    },
  };
  const guarded = guardCorruption(api, o.label);
  return {
    ...guarded,
    passTrackedFiles: () => passPages(guarded),
    // The worker only reads; decoding its rows, or reading here when it could not, goes through the guarded load.
    loadTrackedFilesSoon: async () => {
      let bulk: Awaited<ReturnType<typeof readBulkInWorker>> = null;
      try {
        const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
        // Not for a reader: its snapshot is this connection's (open.ts), which another would not share.
        if (o.readOnly !== true && worthAWorker(bytes)) bulk = await readBulkInWorker(db.name);
      } catch {
        // A database this cannot even size: the load below fails with the classified error.
      }
      return guarded.loadTrackedFiles(bulk ?? undefined);
    },
    path: o.label,
    isNew: o.isNew,
    lockTakenOver: o.lockTakenOver,
    recoveredInFlight,
    readOnly: o.readOnly === true,
  };
}
