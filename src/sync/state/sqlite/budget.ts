import type { Database } from 'better-sqlite3';
import { KbsyncError } from '../../../shared/errors.js';
import type { BudgetWindow, RemoteStatus } from '../../types.js';
import { decodeRemoteName } from '../../tracked/codec.js';
import type { Meta } from './meta.js';
import type { OpRow, Outbox } from './outbox.js';
import { creditsUsedOf } from '../ledger-math.js';
import { uploadedFile } from '../rows.js';
import { epochDay, periodKeys, periodKeysOfDay, type Periods } from '../periods.js';
import type { SourceIds } from './sources.js';
import type { BudgetCaps, BudgetPeriod, CreditsUsed, ReserveResult, SettleOutcome, UnknownResolution } from '../state-types.js';
import type { TrackedFiles } from './tracked.js';

type Deps = { outbox: Outbox; tracked: TrackedFiles; sources: SourceIds; meta: Meta; now: () => Date };

const PERIODS: readonly BudgetPeriod[] = ['run', 'day', 'month'];

/*
 * Money rules (crash safety, retries vs budget):
 * - reserve() is the durable record made BEFORE a paid call: in one IMMEDIATE transaction it checks
 *   spent + reserved + cost <= cap for the run, the UTC day and the UTC month, writes a 'reserve' ledger
 *   row and moves the op to in_flight. Writers serialise on SQLite's write lock (several connections
 *   or processes included), so two of them can never admit against the same headroom.
 * - A reservation's credits count in the periods of the reservation (its run, its UTC day and month),
 *   also when the call settles later: its spend or release is booked to those same periods, so the
 *   check made at reservation time stays true across midnight.
 * - done: a 'spend' row (the server's charge) closes the reservation. failed: a 'release' row (a refused
 *   call costs nothing). unknown: nothing is booked; the reservation stays counted until resolveUnknown().
 */
export function createBudget(db: Database, deps: Deps) {
  const { outbox, tracked, sources, meta, now } = deps;
  const totalsOf = db.prepare<[string], { reserved: number; spent: number }>('SELECT reserved, spent FROM budget_totals WHERE period = ?');
  const addTotals = db.prepare<[string, number, number]>(`INSERT INTO budget_totals (period, reserved, spent) VALUES (?, ?, ?)
    ON CONFLICT (period) DO UPDATE SET reserved = reserved + excluded.reserved, spent = spent + excluded.spent`);
  const ledgerInsert = db.prepare<[number, number, string, number, string | null, number, number]>(
    'INSERT INTO ledger (op_id, run_id, kind, credits, remote_id, at, period_day) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const toInFlight = db.prepare<[number, number, number, number]>(`UPDATE outbox SET state = 'in_flight', reserved = credits,
    reserved_at = ?, run_id = ?, attempts = attempts + 1, error_code = NULL, error = NULL, updated_at = ? WHERE id = ?`);
  const finish = db.prepare<[string, string | null, string | null, string | null, number, number]>(`UPDATE outbox SET state = ?,
    remote_id = coalesce(?, remote_id), error_code = ?, error = ?, reserved = 0, reserved_at = NULL, updated_at = ? WHERE id = ?`);
  const toUnknown = db.prepare<[string, string, number, number]>(
    `UPDATE outbox SET state = 'unknown', error_code = ?, error = ?, updated_at = ? WHERE id = ?`,
  );
  const reprocessed = db.prepare<[string, string | null, number, number, string]>(`UPDATE files SET remote_status = ?,
    reprocess_attempts = reprocess_attempts + 1, last_action = 'reprocess', last_reason = ?, updated_at = ? WHERE source_id = ? AND path = ?`);

  const opIn = (opId: number, state: OpRow['state']): OpRow => {
    const row = outbox.rowOf(opId);
    if (row === undefined) throw new KbsyncError('state_conflict', `no operation ${opId}`);
    if (row.state !== state) throw new KbsyncError('state_conflict', `operation ${opId} is ${row.state}, expected ${state}`);
    return row;
  };
  const bump = (keys: Periods, reserved: number, spent: number): void => {
    for (const period of PERIODS) addTotals.run(keys[period], reserved, spent);
  };
  /** Books the end of an op's reservation: a spend (charged credits) or a release, in the reservation's periods. */
  const closeReservation = (op: OpRow, kind: 'spend' | 'release', charged: number, remoteId: string | null, atMs: number): void => {
    if (op.reserved_at === null || op.run_id === null) throw new Error(`operation ${op.id} has no reservation`);
    const day = epochDay(op.reserved_at);
    ledgerInsert.run(op.id, op.run_id, kind, kind === 'spend' ? charged : op.reserved, remoteId, atMs, day);
    bump(periodKeysOfDay(op.run_id, day), -op.reserved, kind === 'spend' ? charged : 0);
  };
  const usedIn = (key: string): { reserved: number; spent: number } => totalsOf.get(key) ?? { reserved: 0, spent: 0 };

  const complete = (
    op: OpRow,
    creditsCharged: number | null,
    remoteId: string | null,
    remoteStatus: RemoteStatus | null,
    remoteSha256: string | null = null,
  ): void => {
    const charged = creditsCharged ?? op.credits;
    if (!Number.isSafeInteger(charged) || charged < 0)
      throw new RangeError(`credits charged must be a non-negative integer, got ${charged}`);
    if (op.kind === 'upload' && remoteId === null) throw new RangeError(`upload ${op.id} done without a remote id`);
    const atMs = now().getTime();
    closeReservation(op, 'spend', charged, remoteId ?? op.remote_id, atMs);
    finish.run('done', remoteId, null, null, atMs, op.id);
    if (op.kind === 'upload') {
      const source = sources.nameOf(op.source_id as number);
      const { file, reason } = uploadedFile(op, source, (op.sha256 as Buffer).toString('hex'), remoteSha256);
      tracked.writeTracked(
        {
          ...file,
          remoteName: decodeRemoteName(source, file.path, op.remote_name),
          remoteId,
          remoteStatus: remoteStatus ?? 'queued',
          reprocessAttempts: 0,
          lastAction: 'upload',
          lastReason: reason,
        },
        atMs,
      );
    } else if (op.kind === 'reprocess') {
      reprocessed.run(remoteStatus ?? 'queued', op.reason, atMs, op.source_id as number, op.path as string);
    } else if (op.kind === 'reindex') {
      meta.setMeta('last_reindex_at', new Date(atMs).toISOString());
    }
  };

  const reserve = db.transaction((opId: number, caps: BudgetCaps, runId: number): ReserveResult => {
    for (const period of PERIODS) {
      if (Number.isNaN(caps[period]) || caps[period] < 0) throw new RangeError(`budget cap ${period} must be >= 0, got ${caps[period]}`);
    }
    const op = opIn(opId, 'pending');
    const at = now();
    const keys = periodKeys(runId, at);
    for (const period of PERIODS) {
      const t = usedIn(keys[period]);
      const used = t.reserved + t.spent;
      if (used + op.credits > caps[period]) return { ok: false, period, used, cap: caps[period] };
    }
    toInFlight.run(at.getTime(), runId, at.getTime(), opId);
    ledgerInsert.run(opId, runId, 'reserve', op.credits, null, at.getTime(), epochDay(at.getTime()));
    bump(keys, op.credits, 0);
    return { ok: true };
  });

  const settle = db.transaction((opId: number, outcome: SettleOutcome): void => {
    const op = opIn(opId, 'in_flight');
    if (outcome.outcome === 'done') {
      complete(op, outcome.creditsCharged, outcome.remoteId ?? null, outcome.remoteStatus ?? null, outcome.remoteSha256 ?? null);
    } else if (outcome.outcome === 'failed') {
      const atMs = now().getTime();
      closeReservation(op, 'release', 0, null, atMs);
      finish.run('failed', null, outcome.code, outcome.error, atMs, op.id);
    } else {
      toUnknown.run(outcome.code, outcome.error, now().getTime(), op.id);
    }
  });

  const resolveUnknown = db.transaction((opId: number, found: UnknownResolution): void => {
    const op = opIn(opId, 'unknown');
    if (found !== null) {
      complete(op, null, found.remoteId, found.status);
      return;
    }
    const atMs = now().getTime();
    closeReservation(op, 'release', 0, null, atMs);
    finish.run('pending', null, null, 'not found in the remote listing; will be retried with the same idempotency key', atMs, op.id);
  });

  const creditsUsed = (runId: number | null): CreditsUsed => creditsUsedOf(runId, now(), usedIn);

  return {
    /**
     * Admits a pending op against the caps (spent + reserved + its credits <= cap for the run, the UTC day
     * and the UTC month of now); if admitted, reserves its credits and moves it to in_flight, in one
     * IMMEDIATE transaction: the durable record that must exist before the paid call.
     */
    reserve(opId: number, caps: BudgetCaps, runId: number): ReserveResult {
      return reserve.immediate(opId, caps, runId);
    },
    /**
     * Records an in-flight op's outcome. done: the reservation becomes the real spend (creditsCharged, or the
     * planned credits when null) and the tracked file is updated, in the same transaction; failed: the
     * reservation is released; unknown: the reservation is kept and the op waits for resolveUnknown().
     */
    settle(opId: number, outcome: SettleOutcome): void {
      settle.immediate(opId, outcome);
    },
    /**
     * Closes an unknown op after checking the remote listing: found → done, charged the planned credits;
     * null → back to pending with its reservation released (retry it with the same idempotency key).
     */
    resolveUnknown(opId: number, found: UnknownResolution): void {
      resolveUnknown.immediate(opId, found);
    },
    /** Spent and reserved credits in the run (0 for null), the UTC day and the UTC month of now. */
    creditsUsed,
    /** The planner's budget input: caps and what is already used in each period. */
    budgetWindow(caps: BudgetCaps, runId: number | null): BudgetWindow {
      const u = creditsUsed(runId);
      return { caps: { ...caps }, used: { run: u.run, day: u.day, month: u.month } };
    },
  };
}
