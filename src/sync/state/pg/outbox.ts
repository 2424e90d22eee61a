import { randomUUID } from 'node:crypto';
import { KbsyncError } from '../../../shared/errors.js';
import { shaToBlob } from '../../tracked/codec.js';
import { assertOpKind, type NewOp, type OpKind, type OpState, type OutboxOp } from '../state-types.js';
import type { Db } from './db.js';
import type { PgSources } from './sources.js';
import { NEW_OP_COLUMNS, newOpValues, opOfRow, type OpColumns } from '../rows.js';

/** An outbox row as the worker reads it (sha256 as hex, mtime as text). */
export type PgOpRow = OpColumns<OpKind, OpState> & {
  runner_id: number | null;
  scope: string;
  source_id: number | null;
  sha256: string | null;
};

export const PG_OP_COLUMNS = `id, run_id, runner_id, scope, kind, source_id, path, encode(sha256, 'hex') AS sha256, size, mtime_ns::text AS mtime_ns,
  inode, remote_name, remote_id, reason, credits, idempotency_key, state, reserved, reserved_at, error_code, error, attempts, created_at, updated_at,
  payload_json`;
const OPEN = `state IN ('pending','in_flight','unknown')`;

/** Who this process is: its runner row (null for a read-only view) and the scope (its sources) whose ops it works. */
export type PgIdentity = { runnerId: number | null; scope: string };

/** The outbox on PostgreSQL; every list is of this runner's scope only. */
export function createPgOutbox(db: Db, sources: PgSources, me: PgIdentity) {
  const toOp = async (r: PgOpRow): Promise<OutboxOp> =>
    opOfRow(r, r.source_id === null ? null : await sources.nameOf(r.source_id), r.sha256);
  const byState = async (state: OpState): Promise<OutboxOp[]> => {
    const rows = await db.q<PgOpRow>(`SELECT ${PG_OP_COLUMNS} FROM outbox WHERE ${OPEN} AND scope = $1 AND state = $2 ORDER BY id`, [
      me.scope,
      state,
    ]);
    return Promise.all(rows.map(toOp));
  };
  const rowOf = async (opId: number, lock = false): Promise<PgOpRow | undefined> => {
    const rows = await db.q<PgOpRow>(`SELECT ${PG_OP_COLUMNS} FROM outbox WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [opId]);
    return rows[0];
  };
  const cancel = (why: string, opId: number): Promise<number> =>
    db.tx(async () => {
      const n = await db.run(`UPDATE outbox SET state = 'cancelled', error = $1, updated_at = $2 WHERE id = $3 AND state = 'pending'`, [
        why,
        db.nowMs(),
        opId,
      ]);
      if (n > 0) await db.run(`DELETE FROM content_claims WHERE op_id = $1 AND state = 'claimed'`, [opId]);
      return n;
    });

  // An open row for the same work is reused; still queued, it takes today's price (only with no reservation yet:
  // a reserved one's price is in the ledger).
  const reuse = async (r: PgOpRow, credits: number, at: number): Promise<number> => {
    if (r.state === 'pending' && r.credits !== credits)
      await db.run(`UPDATE outbox SET credits = $1, updated_at = $2 WHERE id = $3 AND state = 'pending' AND reserved = 0`, [
        credits,
        at,
        r.id,
      ]);
    return r.id;
  };

  const enqueueOne = async (op: NewOp): Promise<number> => {
    if (!Number.isSafeInteger(op.credits) || op.credits < 0)
      throw new RangeError(`planned credits must be a non-negative integer, got ${op.credits}`);
    assertOpKind(op.kind);
    const at = db.nowMs();
    if (op.kind === 'reindex') {
      const open = await db.q<{ id: number }>(
        `SELECT id FROM outbox WHERE ${OPEN} AND scope = $1 AND state = 'pending' AND kind = 'reindex' LIMIT 1`,
        [me.scope],
      );
      if (open[0] !== undefined) return open[0].id;
    } else if (op.kind === 'intelligence' || op.kind === 'intelligence_batch') {
      // The same request (same entries, same agent) already open: its idempotency key is reused, never a second call.
      const open = await db.q<PgOpRow>(
        `SELECT ${PG_OP_COLUMNS} FROM outbox WHERE ${OPEN} AND scope = $1 AND kind = $2 AND sha256 = $3 ORDER BY id LIMIT 1`,
        [me.scope, op.kind, shaToBlob(op.digest)],
      );
      const r = open[0];
      if (r !== undefined) {
        return reuse(r, op.credits, at);
      }
    } else if (op.kind === 'upload' || op.kind === 'reprocess') {
      const sourceId = await sources.idOf(op.source);
      const open = await db.q<PgOpRow>(
        `SELECT ${PG_OP_COLUMNS} FROM outbox WHERE ${OPEN} AND scope = $1 AND source_id = $2 AND path = $3 AND kind = $4 ORDER BY id FOR UPDATE`,
        [me.scope, sourceId, op.path, op.kind],
      );
      for (const r of open) {
        const same = op.kind === 'upload' ? r.sha256 === op.sha256.toLowerCase() : r.remote_id === op.remoteId;
        if (same) {
          return reuse(r, op.credits, at);
        }
        if (r.state === 'pending') await cancel('superseded by newer content', r.id);
      }
    }
    const { source, values } = newOpValues(op, (ns) => ns.toString());
    const rows = await db.q<{ id: number }>(
      `INSERT INTO outbox (run_id, runner_id, scope, kind, source_id, ${NEW_OP_COLUMNS}, credits, idempotency_key, state, created_at, updated_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,'pending',$17,$17) RETURNING id`,
      [
        op.runId ?? null,
        me.runnerId,
        me.scope,
        op.kind,
        source === null ? null : await sources.idOf(source),
        ...values,
        op.credits,
        randomUUID(),
        at,
      ],
    );
    return (rows[0] as { id: number }).id;
  };

  return {
    enqueue: (op: NewOp): Promise<number> => db.tx(() => enqueueOne(op)),
    enqueueMany: (ops: readonly NewOp[]): Promise<number[]> =>
      db.tx(async () => {
        const ids: number[] = [];
        for (const op of ops) ids.push(await enqueueOne(op));
        return ids;
      }),
    async getOp(opId: number): Promise<OutboxOp | null> {
      const r = await rowOf(opId);
      return r === undefined ? null : toOp(r);
    },
    async abandonInFlight(): Promise<number> {
      if (me.runnerId === null) return 0;
      const rows = await db.q<{ id: number }>(
        `UPDATE outbox SET state = 'unknown', error_code = 'unknown_outcome', error = 'the sync failed while the call was in flight',
           updated_at = $1 WHERE state = 'in_flight' AND runner_id = $2 RETURNING id`,
        [db.nowMs(), me.runnerId],
      );
      return rows.length;
    },
    pendingOps: () => byState('pending'),
    openOpCounts: async (): Promise<{ pending: number; unknown: number }> => {
      const rows = await db.q<{ pending: string; unknown: string }>(
        `SELECT count(*) FILTER (WHERE state = 'pending') AS pending, count(*) FILTER (WHERE state = 'unknown') AS unknown
        FROM outbox WHERE ${OPEN} AND scope = $1`,
        [me.scope],
      );
      return { pending: Number(rows[0]?.pending ?? 0), unknown: Number(rows[0]?.unknown ?? 0) };
    },
    unknownOps: () => byState('unknown'),
    inFlightOps: () => byState('in_flight'),
    async opsForPath(source: string, path: string): Promise<OutboxOp[]> {
      const id = await sources.findId(source);
      if (id === undefined) return [];
      const rows = await db.q<PgOpRow>(`SELECT ${PG_OP_COLUMNS} FROM outbox WHERE source_id = $1 AND path = $2 ORDER BY id`, [id, path]);
      return Promise.all(rows.map(toOp));
    },
    async cancelOp(opId: number, why = 'cancelled'): Promise<void> {
      if ((await cancel(why, opId)) === 0) throw new KbsyncError('state_conflict', `operation ${opId} is not pending`);
    },
    /** Deletes settled ops of runs no longer running (as the SQLite outbox's pruneSettled). */
    // Of this scope only: runners of other sources prune their own (two prunes over the same rows could deadlock).
    pruneSettled: (): Promise<number> =>
      db.tx(() =>
        db.run(
          `DELETE FROM outbox WHERE scope = $1 AND (state IN ('done','cancelled')
            OR (state = 'failed' AND EXISTS (SELECT 1 FROM outbox AS later WHERE later.source_id IS NOT DISTINCT FROM outbox.source_id
              AND later.path IS NOT DISTINCT FROM outbox.path AND later.kind = outbox.kind AND later.id > outbox.id)))
            AND (run_id IS NULL OR run_id NOT IN (SELECT id FROM runs WHERE status = 'running'))`,
          [me.scope],
        ),
      ),
    /** One row, locked for the rest of the transaction when `lock`. */
    rowOf,
  };
}

export type PgOutbox = ReturnType<typeof createPgOutbox>;
