import type { Database } from 'better-sqlite3';
import { KbsyncError } from '../../../shared/errors.js';
import type { RunRecord, RunStatus } from '../state-types.js';
import { runOfRow, type RunRow } from '../rows.js';
import { RUNS_KEPT } from '../retention.js';

/*
 * One row per cycle would grow without bound under a daemon, so finishRun prunes finished runs beyond the
 * newest RUNS_KEPT. Runs that ledger or outbox rows point at are kept: ledger.run_id is NOT NULL and the
 * ledger is append-only, and an op's run_id decides the periods its reservation closes in, so neither may
 * change (foreign_keys=ON would refuse the delete anyway). Those runs are the ones with paid calls, whose
 * history is in the ledger already. A running run is never deleted, nor the newest finished ones, so the
 * highest id survives and INTEGER PRIMARY KEY never hands out a used id again ('run:<id>' budget keys).
 * Each prune looks only at the RUNS_KEPT ids below the kept window (bounded work however many paid runs
 * are kept); the run whose id is a multiple of RUNS_KEPT looks at all of them, which frees a run whose
 * last reference was a pending op reserved much later under another run.
 */
const PRUNE = `WITH edge AS (SELECT id FROM runs WHERE status <> 'running' ORDER BY id DESC LIMIT 1 OFFSET ${RUNS_KEPT})
  DELETE FROM runs WHERE status <> 'running'
    AND id <= (SELECT id FROM edge) AND id > (SELECT id FROM edge) - ?
    AND NOT EXISTS (SELECT 1 FROM ledger WHERE ledger.run_id = runs.id)
    AND id NOT IN (SELECT run_id FROM outbox WHERE run_id IS NOT NULL)`;

/** The `runs` table: one row per plan/sync/watch cycle. */
export function createRuns(db: Database, nowMs: () => number) {
  const insert = db.prepare<[string, number]>(`INSERT INTO runs (command, status, started_at) VALUES (?, 'running', ?)`);
  const finish = db.prepare<[string, number, string, number]>(
    `UPDATE runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ? AND status = 'running'`,
  );
  const last = db.prepare<[], RunRow>('SELECT * FROM runs ORDER BY id DESC LIMIT 1');
  const lastOf = db.prepare<[string], RunRow>('SELECT * FROM runs WHERE command = ? ORDER BY id DESC LIMIT 1');
  const byId = db.prepare<[number], RunRow>('SELECT * FROM runs WHERE id = ?');
  const interrupt = db.prepare<[number, number]>(
    `UPDATE runs SET status = 'interrupted', finished_at = ? WHERE status = 'running' AND started_at < ?`,
  );
  const prune = db.prepare<[number]>(PRUNE);
  // One transaction: the prune costs no disk sync of its own.
  const finishAndPrune = db.transaction((runId: number, status: string, summary: unknown): void => {
    if (finish.run(status, nowMs(), JSON.stringify(summary ?? null), runId).changes === 0) {
      throw new KbsyncError('state_conflict', `run ${runId} is not running`);
    }
    prune.run(runId % RUNS_KEPT === 0 ? Number.MAX_SAFE_INTEGER : RUNS_KEPT);
  });

  return {
    /** Starts a run; returns its id. */
    startRun(command: string): number {
      return Number(insert.run(command, nowMs()).lastInsertRowid);
    },
    /** Ends a running run with a status and a JSON-serialisable summary, then prunes old finished runs (see RUNS_KEPT). */
    finishRun(runId: number, status: Exclude<RunStatus, 'running' | 'interrupted'>, summary: unknown): void {
      finishAndPrune.immediate(runId, status, summary);
    },
    /** The newest run (of `command` when given), or null. */
    lastRun(command?: string): RunRecord | null {
      const r = command === undefined ? last.get() : lastOf.get(command);
      return r === undefined ? null : runOfRow(r);
    },
    /** One run, or null. */
    getRun(runId: number): RunRecord | null {
      const r = byId.get(runId);
      return r === undefined ? null : runOfRow(r);
    },
    /** Marks runs a dead process left 'running' as interrupted, but those started at or after `sparedSinceMs`; returns how many. */
    interruptRunning(sparedSinceMs = Number.MAX_SAFE_INTEGER): number {
      return interrupt.run(nowMs(), sparedSinceMs).changes;
    },
  };
}
