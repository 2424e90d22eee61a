/**
 * Worker-thread entry (see sync-bridge.ts): owns the one PostgreSQL connection of a StateStore and
 * runs the handlers the main thread calls, one at a time, answering each on the port and waking the
 * main thread through the shared flag.
 */
import pg from 'pg';
import { workerData } from 'node:worker_threads';
import { errorText, KbsyncError } from '../../../shared/errors.js';
import { toWire } from '../../../shared/worker-channel.js';
import { redactUrl } from './url.js';
import type { TrackedFileInput } from '../../tracked/fields.js';
import type { RebuildReport } from '../state-types.js';
import type { RemoteStatus } from '../../types.js';
import { BEAT_MS, WORD, type BridgeReply, type BridgeRequest, type BridgeWorkerData } from './sync-bridge.js';
import { createDb } from './db.js';
import { createPgBudget } from './budget.js';
import { createPgMeta } from './meta.js';
import { createPgOutbox, type PgIdentity } from './outbox.js';
import { createPgRuns, foldGoneRunners, lockSources, recoverDeadRunners, registerRunner } from './runs.js';
import { migratePg } from './schema.js';
import { createPgSources } from './sources.js';
import { createPgTracked } from './tracked.js';
import { createPgTransfer } from './transfer.js';
import { createPgEntries } from './entries.js';
import { createPgHeldCopies } from './held-copies.js';
import { createPgWebhookEvents } from './webhook-events.js';
import { createPgLedgerAudit } from './ledger-audit.js';
import { listedStatuses, type ListedCopy } from '../../tracked/fields.js';

/** What openPgState asks of the worker's first call. */
export type PgOpenRequest = { scope: string; register: boolean };
/** What the open answered. */
export type PgOpenReply = { from: number; runnerId: number | null; recovered: number };

// bigint (int8) comes back as a number: ids, sizes, epoch ms and credit sums stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

const { url, flag, port, open } = workerData as BridgeWorkerData;
const signal = new Int32Array(flag);

/**
 * The main thread sleeps in Atomics.wait and sees none of this worker's events: a worker that dies
 * answers the call in flight with `state_unavailable` and sets WORD.dead, waking it (sync-bridge.ts).
 */
function dying(why: string): void {
  if (Atomics.load(signal, WORD.dead) !== 0) return;
  const reply: BridgeReply = { ok: false, error: toWire(new KbsyncError('state_unavailable', `the PostgreSQL state worker ${why}`)) };
  try {
    port.postMessage(reply);
  } catch {
    // The port is closed: the main thread is gone or has closed the state; the word below is enough.
  }
  Atomics.store(signal, WORD.dead, 1);
  Atomics.store(signal, WORD.reply, 1);
  Atomics.notify(signal, WORD.reply);
}
// The monitor observes and lets the error end the worker as it would have (an unhandled rejection included).
process.on('uncaughtExceptionMonitor', (err) => dying(`failed: ${errorText(err)}`));
process.on('exit', (code) => dying(`ended (exit code ${code})`));
// A death that runs no code (out of memory, the thread killed) stops this heartbeat instead.
setInterval(() => Atomics.add(signal, WORD.beat, 1), BEAT_MS).unref();
const client = new pg.Client({ connectionString: url, application_name: 'kbsync' });
let lost: string | null = null;
let connected = false;
client.on('error', (err) => (lost = err.message));
const db = createDb(client);
const sources = createPgSources(db);
const me: PgIdentity = { runnerId: null, scope: (open as PgOpenRequest).scope };
const tracked = createPgTracked(db, sources, me.scope);
const outbox = createPgOutbox(db, sources, me);
const runs = createPgRuns(db, me);
const budget = createPgBudget(db, { outbox, tracked, sources, me });
const meta = createPgMeta(db);
const webhooks = createPgWebhookEvents(db);
const held = createPgHeldCopies(db, sources);

type Handler = (...args: never[]) => Promise<unknown> | AsyncGenerator<unknown>;
const handlers = {
  ...tracked,
  ...outbox,
  ...runs,
  ...budget,
  ...meta,
  ...webhooks,
  ...createPgLedgerAudit(db),
  ...createPgTransfer(db, sources),
  ...createPgEntries(db, sources),
  heldCopies: held.heldCopies,
  // A held copy's status is kept current with the tracked rows' (a copy left while queued may fail later).
  setRemoteStatus: async (remoteId: string, status: RemoteStatus): Promise<number> => {
    await held.setHeldStatuses(new Map([[remoteId, status]]));
    return tracked.setRemoteStatus(remoteId, status);
  },
  recordListing: async (copies: readonly ListedCopy[]): Promise<number> => {
    await held.setHeldStatuses(listedStatuses(copies));
    return tracked.recordListing(copies);
  },
  async open(): Promise<PgOpenReply> {
    try {
      await client.connect();
      connected = true;
    } catch (err) {
      throw new KbsyncError('state_unavailable', `cannot open the PostgreSQL state ${redactUrl(url)}: ${errorText(err)}`);
    }
    // A runner frozen inside a transaction (stopped, its machine cut off) must not hold the budget rows
    // for ever: PostgreSQL ends such a session after a minute, and its transaction rolls back.
    await db.run("SET idle_in_transaction_session_timeout = '60s'");
    const from = await migratePg(db);
    if (!(open as PgOpenRequest).register) return { from, runnerId: null, recovered: 0 };
    // Its sources first: a runner refused (another holds one of them) leaves no row behind.
    await lockSources(db, me.scope);
    me.runnerId = await registerRunner(db, me.scope);
    const recovered = await recoverDeadRunners(db, me.runnerId);
    await foldGoneRunners(db, me);
    await outbox.pruneSettled();
    // As the SQLite state's open: deliveries past the retention go (the daemon also prunes as it records).
    await webhooks.pruneWebhookEvents();
    return { from, runnerId: me.runnerId, recovered };
  },
  finishRun: async (runId: number, status: 'done' | 'stopped' | 'failed', summary: unknown): Promise<void> => {
    // A daemon opens once: the runners gone since then are folded here (before the prune of this runner's runs).
    await foldGoneRunners(db, me);
    await runs.finishRun(runId, status, summary);
    await outbox.pruneSettled();
  },
  rebuildApply: (files: TrackedFileInput[], report: RebuildReport, older: TrackedFileInput[]): Promise<RebuildReport> =>
    db.tx(async () => {
      const at = db.nowMs();
      const written = await tracked.writeTrackedIfNew(files, at);
      await held.addHeld(older);
      const done = { ...report, inserted: written, kept: files.length - written };
      await meta.setMeta('rebuilt_from_remote', JSON.stringify({ at: new Date(at).toISOString(), ...done }));
      await meta.setMeta('remote_check', null);
      return done;
    }),
  begin: () => db.begin(),
  commit: () => db.commit(),
  rollback: () => db.rollback(),
  async diagnostics(): Promise<{ schemaVersion: number; server: string; database: string }> {
    const rows = await db.q<{ version: number; server: string; database: string }>(
      `SELECT (SELECT version FROM kbsync_schema) AS version, current_setting('server_version') AS server, current_database() AS database`,
    );
    const r = rows[0] as { version: number; server: string; database: string };
    return { schemaVersion: r.version, server: r.server, database: r.database };
  },
  async close(): Promise<void> {
    // The runner and source locks go now, not when the server notices the closed socket: a `status`
    // or another runner right after this one ends sees it ended.
    if (connected && lost === null) await db.q('SELECT pg_advisory_unlock_all()').catch(() => {});
    await client.end().catch(() => {});
  },
} satisfies Record<string, Handler>;

/** What the main thread may call (store.ts forwards each StateStore method to its handler here). */
export type PgHandlers = typeof handlers;

/** Handlers that only read: run as they are. */
const READS = new Set([
  'streamTrackedSources',
  'trackedRowsOf',
  'trackedDetailsOf',
  'trackedSourceNames',
  'trackedPage',
  'getTracked',
  'findBySha256',
  'trackedCount',
  'hasUnsettledRemote',
  'unsettledCopies',
  'heldCopies',
  'remoteCheckPending',
  'originsOfRemoteIds',
  'getOp',
  'pendingOps',
  'unknownOps',
  'openOpCounts',
  'inFlightOps',
  'opsForPath',
  'lastRun',
  'getRun',
  'runners',
  'creditsUsed',
  'ledgerTotals',
  'verifyTotals',
  'getMeta',
  'lastSyncedCommit',
  'webhookEventSeen',
  'webhookEvents',
  'trackedEntries',
  'diagnostics',
]);
/** Handlers that manage the connection or the transaction themselves. */
const OWN_TRANSACTION = new Set(['open', 'close', 'begin', 'commit', 'rollback', 'exportSnapshot', 'importSnapshot']);

/**
 * Runs a handler. A write outside the main thread's transaction runs as one transaction of its own,
 * so that one PostgreSQL ends to break a deadlock is run again whole (db.ts), never half applied.
 */
function dispatch(method: string, args: unknown[]): Promise<unknown> | AsyncGenerator<unknown> {
  const handler = (handlers as Record<string, Handler>)[method] as
    ((...a: unknown[]) => Promise<unknown> | AsyncGenerator<unknown>) | undefined;
  if (handler === undefined) throw new Error(`no PostgreSQL state handler ${method}`);
  if (READS.has(method) || OWN_TRANSACTION.has(method) || db.inTransaction()) return handler(...args);
  return db.tx(() => handler(...args) as Promise<unknown>);
}

port.on('message', (req: BridgeRequest) => {
  void (async () => {
    let reply: BridgeReply;
    try {
      if (lost !== null && req.method !== 'close')
        throw new KbsyncError('state_unavailable', `the connection to the PostgreSQL state ${redactUrl(url)} was lost: ${lost}`);
      db.setNow(req.nowMs);
      const value = await dispatch(req.method, req.args);
      // A handler that yields answers in parts, each posted as it is read: the main thread takes one while the next is read.
      if (isStream(value)) {
        for await (const part of value) answer({ ok: true, value: part, more: true });
        reply = { ok: true, value: null };
      } else reply = { ok: true, value };
    } catch (err) {
      reply = { ok: false, error: toWire(err) };
    }
    answer(reply);
  })();
});

function answer(reply: BridgeReply): void {
  port.postMessage(reply);
  Atomics.store(signal, WORD.reply, 1);
  Atomics.notify(signal, WORD.reply);
}

const isStream = (v: unknown): v is AsyncIterable<unknown> => typeof v === 'object' && v !== null && Symbol.asyncIterator in v;
