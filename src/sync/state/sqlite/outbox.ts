import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { KbsyncError } from '../../../shared/errors.js';
import { blobToSha, shaToBlob } from '../../tracked/codec.js';
import type { SourceIds } from './sources.js';
import { assertOpKind, type NewOp, type OpKind, type OpState, type OutboxOp } from '../state-types.js';
import { NEW_OP_COLUMNS, newOpValues, opOfRow, type OpColumns } from '../rows.js';

export type Outbox = ReturnType<typeof createOutbox>;

/** Columns of an outbox row, in the order OpRow lists them. */
export const OP_COLUMNS = `id, run_id, kind, source_id, path, sha256, size, CAST(mtime_ns AS TEXT) AS mtime_ns, inode, remote_name,
  remote_id, reason, credits, idempotency_key, state, reserved, reserved_at, error_code, error, attempts, created_at, updated_at, payload_json`;

/** An outbox row as SQLite gives it (sha256 as a BLOB, mtime as text). */
export type OpRow = OpColumns<OpKind, OpState> & { source_id: number | null; sha256: Buffer | null };

// Must match the partial index outbox_open term for term, or SQLite will not use the index.
const OPEN = `state IN ('pending','in_flight','unknown')`;

/** The counts row of the open operations (sums are null over no row). */
const countsOf = (r: { pending: number | null; unknown: number | null } | undefined) => ({
  pending: r?.pending ?? 0,
  unknown: r?.unknown ?? 0,
});

/** The outbox: durable paid operations, written before any call is made. */
export function createOutbox(db: Database, sources: SourceIds, nowMs: () => number) {
  const byId = db.prepare<[number], OpRow>(`SELECT ${OP_COLUMNS} FROM outbox WHERE id = ?`);
  const byState = db.prepare<[OpState], OpRow>(`SELECT ${OP_COLUMNS} FROM outbox WHERE ${OPEN} AND state = ? ORDER BY id`);
  const openCounts = db.prepare<[], { pending: number | null; unknown: number | null }>(
    `SELECT sum(state = 'pending') AS pending, sum(state = 'unknown') AS unknown FROM outbox WHERE ${OPEN}`,
  );
  const openForPath = db.prepare<[number, string, OpKind], OpRow>(
    `SELECT ${OP_COLUMNS} FROM outbox WHERE ${OPEN} AND source_id = ? AND path = ? AND kind = ? ORDER BY id`,
  );
  const openReindex = db.prepare<[], OpRow>(
    `SELECT ${OP_COLUMNS} FROM outbox WHERE ${OPEN} AND state = 'pending' AND kind = 'reindex' LIMIT 1`,
  );
  const forPath = db.prepare<[number, string], OpRow>(`SELECT ${OP_COLUMNS} FROM outbox WHERE source_id = ? AND path = ? ORDER BY id`);
  const openIntel = db.prepare<[OpKind, Buffer], OpRow>(
    `SELECT ${OP_COLUMNS} FROM outbox WHERE ${OPEN} AND kind = ? AND sha256 = ? ORDER BY id`,
  );
  const insert = db.prepare(`INSERT INTO outbox (run_id, kind, source_id, ${NEW_OP_COLUMNS}, credits, idempotency_key, state, created_at,
      updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,'pending',?,?)`);
  // Only a row with no reservation yet: a reserved one's price is in the ledger.
  const reprice = db.prepare<[number, number, number]>(
    `UPDATE outbox SET credits = ?, updated_at = ? WHERE id = ? AND state = 'pending' AND reserved = 0`,
  );
  const cancel = db.prepare<[string, number, number]>(
    `UPDATE outbox SET state = 'cancelled', error = ?, updated_at = ? WHERE id = ? AND state = 'pending'`,
  );
  // Settled ops go; so does a failure that a later op for the same path superseded (a file failing at
  // every cycle of a daemon would otherwise add a row per cycle): each path keeps its latest failure.
  const prune = db.prepare<[]>(`DELETE FROM outbox WHERE (state IN ('done','cancelled')
      OR (state = 'failed' AND EXISTS (SELECT 1 FROM outbox AS later WHERE later.source_id IS outbox.source_id
        AND later.path IS outbox.path AND later.kind = outbox.kind AND later.id > outbox.id)))
    AND (run_id IS NULL OR run_id NOT IN (SELECT id FROM runs WHERE status = 'running'))`);
  // The calls of runs started since a live guest came may be that guest's, still under way (guests.ts).
  const toUnknown = db.prepare<[number, number]>(
    `UPDATE outbox SET state = 'unknown', error_code = 'unknown_outcome',
       error = 'kbsync stopped while the call was in flight', updated_at = ? WHERE ${OPEN} AND state = 'in_flight'
       AND (run_id IS NULL OR run_id NOT IN (SELECT id FROM runs WHERE started_at >= ?))`,
  );

  const toOp = (r: OpRow): OutboxOp =>
    opOfRow(r, r.source_id === null ? null : sources.nameOf(r.source_id), r.sha256 === null ? null : blobToSha(r.sha256));

  const sameWork = (op: NewOp, r: OpRow): boolean => {
    if (op.kind === 'upload') return r.sha256 !== null && blobToSha(r.sha256) === op.sha256.toLowerCase();
    if (op.kind === 'reprocess') return r.remote_id === op.remoteId;
    return true;
  };

  const enqueue = db.transaction((op: NewOp): number => {
    if (!Number.isSafeInteger(op.credits) || op.credits < 0)
      throw new RangeError(`planned credits must be a non-negative integer, got ${op.credits}`);
    assertOpKind(op.kind);
    const at = nowMs();
    if (op.kind === 'reindex') {
      const open = openReindex.get();
      if (open !== undefined) return open.id;
    } else if (op.kind === 'intelligence' || op.kind === 'intelligence_batch') {
      // The same request (same entries, same agent) already open: its idempotency key is reused, never a second call.
      const open = openIntel.get(op.kind, shaToBlob(op.digest));
      if (open !== undefined) {
        if (open.state === 'pending' && open.credits !== op.credits) reprice.run(op.credits, at, open.id);
        return open.id;
      }
    } else if (op.kind === 'upload' || op.kind === 'reprocess') {
      const sourceId = sources.idOf(op.source);
      for (const r of openForPath.all(sourceId, op.path, op.kind)) {
        // The same work is already queued, in flight or being reconciled: never a second paid call for it.
        // Still queued, it takes today's price (target.uploadCost may have changed since it was queued).
        if (sameWork(op, r)) {
          if (r.state === 'pending' && r.credits !== op.credits) reprice.run(op.credits, at, r.id);
          return r.id;
        }
        // A queued op for older content is obsolete; in-flight and unknown ones must still be settled.
        if (r.state === 'pending') cancel.run('superseded by newer content', at, r.id);
      }
    }
    // A query or chat is new work every time: never folded into an open row.
    const { source, values } = newOpValues(op, (ns) => ns);
    const info = insert.run(
      op.runId ?? null,
      op.kind,
      source === null ? null : sources.idOf(source),
      ...values,
      op.credits,
      randomUUID(),
      at,
      at,
    );
    return Number(info.lastInsertRowid);
  });

  return {
    /**
     * Puts an operation in the outbox as 'pending' (no reservation yet) with a fresh idempotency key;
     * returns its id. If the same work (same path and content, or same remote id) is already open,
     * returns that op's id instead; a pending op for the same path with other content is cancelled.
     */
    enqueue(op: NewOp): number {
      return enqueue.immediate(op);
    },
    /** enqueue() for many operations in one transaction (one disk sync); returns their ids in order. */
    enqueueMany(ops: readonly NewOp[]): number[] {
      return db.transaction(() => ops.map((op) => enqueue(op))).immediate();
    },
    /** One operation, or null. */
    getOp(opId: number): OutboxOp | null {
      const r = byId.get(opId);
      return r === undefined ? null : toOp(r);
    },
    /** Operations waiting for a reservation, oldest first. */
    pendingOps(): OutboxOp[] {
      return byState.all('pending').map(toOp);
    },
    /** Operations whose outcome is unknown: reconcile them against the remote listing before any retry. */
    unknownOps(): OutboxOp[] {
      return byState.all('unknown').map(toOp);
    },
    openOpCounts: (): { pending: number; unknown: number } => countsOf(openCounts.get()),
    /** Operations currently in flight (reserved, call under way). */
    inFlightOps(): OutboxOp[] {
      return byState.all('in_flight').map(toOp);
    },
    /** Every operation ever queued for a path, oldest first (for explain). */
    opsForPath(source: string, path: string): OutboxOp[] {
      const id = sources.findId(source);
      return id === undefined ? [] : forPath.all(id, path).map(toOp);
    },
    /** Cancels a pending operation; throws state_conflict when it is not pending. */
    cancelOp(opId: number, why = 'cancelled'): void {
      if (cancel.run(why, nowMs(), opId).changes === 0) {
        throw new KbsyncError('state_conflict', `operation ${opId} is not pending`);
      }
    },
    /**
     * Turns operations a dead process left in flight into 'unknown' (their reservation stays); returns
     * how many. Those of runs started at or after `sparedSinceMs` (a live guest's, maybe) are left alone.
     */
    recoverInFlight(sparedSinceMs = Number.MAX_SAFE_INTEGER): number {
      return toUnknown.run(nowMs(), sparedSinceMs).changes;
    },
    /** Deletes done and cancelled ops of runs no longer running (their outcome lives in files and ledger); returns how many. */
    pruneSettled(): number {
      return prune.run().changes;
    },
    /** Row access for the budget module. */
    rowOf(opId: number): OpRow | undefined {
      return byId.get(opId);
    },
  };
}
