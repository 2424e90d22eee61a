import { KbsyncError } from '../../../shared/errors.js';
import type { RemoteStatus } from '../../types.js';
import { decodeRemoteName } from '../../tracked/codec.js';
import { creditsUsedOf } from '../ledger-math.js';
import { uploadedFile } from '../rows.js';
import { epochDay, periodKeys, periodKeysOfDay, type Periods } from '../periods.js';
import type { BudgetCaps, BudgetPeriod, CreditsUsed, ReserveResult, SettleOutcome, UnknownResolution } from '../state-types.js';
import type { Db } from './db.js';
import { createPgContentClaims, type Reuse } from './content-claims.js';
import type { PgIdentity, PgOpRow, PgOutbox } from './outbox.js';
import type { PgSources } from './sources.js';
import type { PgTracked } from './tracked.js';

const PERIODS: readonly BudgetPeriod[] = ['run', 'day', 'month'];
type Totals = { reserved: number; spent: number };

/** Locks the period rows of `keys` (made first if new), in key order, and reads their totals. */
async function lockTotals(db: Db, keys: Periods): Promise<Map<string, Totals>> {
  const list = PERIODS.map((p) => keys[p]);
  await db.run('INSERT INTO budget_totals (period) SELECT unnest($1::text[]) ON CONFLICT (period) DO NOTHING', [list]);
  const rows = await db.q<{ period: string } & Totals>(
    'SELECT period, reserved, spent FROM budget_totals WHERE period = ANY($1) ORDER BY period FOR UPDATE',
    [list],
  );
  return new Map(rows.map((r) => [r.period, { reserved: r.reserved, spent: r.spent }]));
}

async function bump(db: Db, keys: Periods, reserved: number, spent: number): Promise<void> {
  await db.run('UPDATE budget_totals SET reserved = reserved + $2, spent = spent + $3 WHERE period = ANY($1)', [
    PERIODS.map((p) => keys[p]),
    reserved,
    spent,
  ]);
}

function ledger(db: Db, op: PgOpRow, runId: number, kind: string, credits: number, remoteId: string | null, at: number, day: number) {
  return db.run('INSERT INTO ledger (op_id, run_id, kind, credits, remote_id, at, period_day) VALUES ($1,$2,$3,$4,$5,$6,$7)', [
    op.id,
    runId,
    kind,
    credits,
    remoteId,
    at,
    day,
  ]);
}

/** Ends an op's reservation row: its new state, what the call left (remote id, error). */
function finish(db: Db, state: string, remoteId: string | null, code: string | null, error: string | null, at: number, id: number) {
  return db.run(
    `UPDATE outbox SET state = $1, remote_id = coalesce($2, remote_id), error_code = $3, error = $4, reserved = 0, reserved_at = NULL,
       updated_at = $5 WHERE id = $6`,
    [state, remoteId, code, error, at, id],
  );
}

/** Spends or releases an op's reservation in the periods it was made in, with its ledger row. */
async function closeReservation(db: Db, op: PgOpRow, kind: 'spend' | 'release', charged: number, remoteId: string | null, at: number) {
  if (op.reserved_at === null || op.run_id === null) throw new Error(`operation ${op.id} has no reservation`);
  const day = epochDay(op.reserved_at);
  const keys = periodKeysOfDay(op.run_id, day);
  await lockTotals(db, keys);
  await ledger(db, op, op.run_id, kind, kind === 'spend' ? charged : op.reserved, remoteId, at, day);
  await bump(db, keys, -op.reserved, kind === 'spend' ? charged : 0);
}

async function creditsUsed(db: Db, runId: number | null): Promise<CreditsUsed> {
  const at = new Date(db.nowMs());
  const keys = periodKeys(runId ?? 0, at);
  const rows = await db.q<{ period: string } & Totals>('SELECT period, reserved, spent FROM budget_totals WHERE period = ANY($1)', [
    [keys.run, keys.day, keys.month],
  ]);
  return creditsUsedOf(runId, at, (key) => rows.find((r) => r.period === key) ?? { reserved: 0, spent: 0 });
}

/**
 * Admits `op` against every period's cap under the period rows' locks: reserves its credits (the op
 * in flight, a ledger row, the totals) or, over a cap, names it and gives the op's content claim up.
 */
async function admit(
  db: Db,
  op: PgOpRow,
  caps: BudgetCaps,
  runId: number,
  me: PgIdentity,
  claims: ReturnType<typeof createPgContentClaims>,
): Promise<ReserveResult> {
  const at = db.nowMs();
  const keys = periodKeys(runId, new Date(at));
  const totals = await lockTotals(db, keys);
  for (const period of PERIODS) {
    const t = totals.get(keys[period]) ?? { reserved: 0, spent: 0 };
    const used = t.reserved + t.spent;
    if (used + op.credits > caps[period]) {
      if (op.kind === 'upload') await claims.release(op.id);
      return { ok: false, period, used, cap: caps[period] };
    }
  }
  await db.run(
    `UPDATE outbox SET state = 'in_flight', reserved = credits, reserved_at = $1, run_id = $2, runner_id = coalesce($3, runner_id),
       attempts = attempts + 1, error_code = NULL, error = NULL, updated_at = $1 WHERE id = $4`,
    [at, runId, me.runnerId, op.id],
  );
  await ledger(db, op, runId, 'reserve', op.credits, null, at, epochDay(at));
  await bump(db, keys, op.credits, 0);
  return { ok: true };
}

/** Tracks the file of a done upload (or one reusing another runner's copy, `how`) against its remote copy. */
async function writeUpload(
  { tracked, sources }: { tracked: PgTracked; sources: PgSources },
  op: PgOpRow,
  remoteId: string,
  status: RemoteStatus,
  remoteSha: string | null,
  at: number,
  how: Reuse | null,
): Promise<void> {
  const source = await sources.nameOf(op.source_id as number);
  const { file, reason } = uploadedFile(op, source, op.sha256 as string, remoteSha);
  await tracked.writeTracked(
    {
      ...file,
      remoteName: how?.remoteName ?? decodeRemoteName(source, file.path, op.remote_name),
      remoteId,
      remoteStatus: status,
      reprocessAttempts: 0,
      lastAction: how === null ? 'upload' : 'skip:duplicate-content',
      lastReason:
        how !== null
          ? `the same content was bought by another runner of this dataset as ${how.remoteName}: tracked against that copy`
          : reason,
    },
    at,
  );
}

/*
 * The money rules of sqlite/budget.ts, across processes. Every transaction that changes a period's totals
 * first locks the op's outbox row, then the period rows (budget_totals), in the order of their keys
 * (SELECT ... FOR UPDATE ORDER BY period): two reservations against the same month wait for each
 * other, and since all take the locks in the same order they cannot deadlock. Row locks, not
 * SERIALIZABLE: the contended rows are known before the check (one per period), a waiter proceeds as
 * soon as the holder commits and re-reads the committed totals, and nothing is retried (docs/architecture.md).
 */
export function createPgBudget(db: Db, deps: { outbox: PgOutbox; tracked: PgTracked; sources: PgSources; me: PgIdentity }) {
  const { outbox, sources } = deps;
  const claims = createPgContentClaims(db, deps.me);
  const opIn = async (opId: number, state: PgOpRow['state']): Promise<PgOpRow> => {
    const row = await outbox.rowOf(opId, true);
    if (row === undefined) throw new KbsyncError('state_conflict', `no operation ${opId}`);
    if (row.state !== state) throw new KbsyncError('state_conflict', `operation ${opId} is ${row.state}, expected ${state}`);
    return row;
  };
  const complete = async (
    op: PgOpRow,
    charged: number | null,
    remoteId: string | null,
    status: RemoteStatus | null,
    sha: string | null,
  ) => {
    const credits = charged ?? op.reserved;
    if (!Number.isSafeInteger(credits) || credits < 0)
      throw new RangeError(`credits charged must be a non-negative integer, got ${credits}`);
    if (op.kind === 'upload' && remoteId === null) throw new RangeError(`upload ${op.id} done without a remote id`);
    const at = db.nowMs();
    await closeReservation(db, op, 'spend', credits, remoteId ?? op.remote_id, at);
    await finish(db, 'done', remoteId, null, null, at, op.id);
    if (op.kind === 'upload') {
      await writeUpload(deps, op, remoteId as string, status ?? 'queued', sha, at, null);
      const name = decodeRemoteName(await sources.nameOf(op.source_id as number), op.path as string, op.remote_name);
      await claims.bought(op, remoteId, name, at);
    } else if (op.kind === 'reprocess') {
      await db.run(
        `UPDATE files SET remote_status = $1, reprocess_attempts = reprocess_attempts + 1, last_action = 'reprocess', last_reason = $2,
           updated_at = $3 WHERE source_id = $4 AND path = $5`,
        [status ?? 'queued', op.reason, at, op.source_id, op.path],
      );
    } else if (op.kind === 'reindex') {
      await db.run(`INSERT INTO meta (key, value) VALUES ('last_reindex_at', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [
        new Date(at).toISOString(),
      ]);
    }
  };
  return {
    reserve: (opId: number, caps: BudgetCaps, runId: number): Promise<ReserveResult> =>
      db.tx(async () => {
        for (const period of PERIODS) {
          if (Number.isNaN(caps[period]) || caps[period] < 0)
            throw new RangeError(`budget cap ${period} must be >= 0, got ${caps[period]}`);
        }
        const op = await opIn(opId, 'pending');
        if (op.kind === 'upload' && op.sha256 !== null) {
          const other = await claims.claim(op);
          if (other === 'busy' || other === 'orphaned')
            return { ok: false, period: 'content', reused: null, holderAlive: other === 'busy' };
          if (other !== null) {
            // Bought already by another runner: this op is done at no cost, tracked against that copy.
            const at = db.nowMs();
            await finish(db, 'done', other.remoteId, null, null, at, op.id);
            await writeUpload(deps, op, other.remoteId, 'queued', null, at, other);
            return { ok: false, period: 'content', reused: other, holderAlive: false };
          }
        }
        return admit(db, op, caps, runId, deps.me, claims);
      }),
    settle: (opId: number, outcome: SettleOutcome): Promise<void> =>
      db.tx(async () => {
        const op = await opIn(opId, 'in_flight');
        if (outcome.outcome === 'done') {
          await complete(op, outcome.creditsCharged, outcome.remoteId ?? null, outcome.remoteStatus ?? null, outcome.remoteSha256 ?? null);
        } else if (outcome.outcome === 'failed') {
          const at = db.nowMs();
          await closeReservation(db, op, 'release', 0, null, at);
          await finish(db, 'failed', null, outcome.code, outcome.error, at, op.id);
          await claims.release(op.id);
        } else {
          await db.run(`UPDATE outbox SET state = 'unknown', error_code = $1, error = $2, updated_at = $3 WHERE id = $4`, [
            outcome.code,
            outcome.error,
            db.nowMs(),
            op.id,
          ]);
        }
      }),
    resolveUnknown: (opId: number, found: UnknownResolution): Promise<void> =>
      db.tx(async () => {
        const op = await opIn(opId, 'unknown');
        if (found !== null) {
          await complete(op, null, found.remoteId, found.status, null);
          return;
        }
        const at = db.nowMs();
        await closeReservation(db, op, 'release', 0, null, at);
        // The claim stays with the op: it is retried with the same idempotency key.
        await finish(
          db,
          'pending',
          null,
          null,
          'not found in the remote listing; will be retried with the same idempotency key',
          at,
          op.id,
        );
      }),
    creditsUsed: (runId: number | null): Promise<CreditsUsed> => creditsUsed(db, runId),
  };
}
