import type { Database } from 'better-sqlite3';
import { KbsyncError } from '../../shared/errors.js';
import { isoOf } from './codec.js';
import type { RunRecord, RunStatus } from './state-types.js';

type Row = { id: number; command: string; status: string; started_at: number; finished_at: number | null; summary_json: string | null };

export type Runs = ReturnType<typeof createRuns>;

/** The `runs` table: one row per plan/sync/watch cycle. */
export function createRuns(db: Database, nowMs: () => number) {
  const insert = db.prepare<[string, number]>(`INSERT INTO runs (command, status, started_at) VALUES (?, 'running', ?)`);
  const finish = db.prepare<[string, number, string, number]>(
    `UPDATE runs SET status = ?, finished_at = ?, summary_json = ? WHERE id = ? AND status = 'running'`,
  );
  const last = db.prepare<[], Row>('SELECT * FROM runs ORDER BY id DESC LIMIT 1');
  const lastOf = db.prepare<[string], Row>('SELECT * FROM runs WHERE command = ? ORDER BY id DESC LIMIT 1');
  const byId = db.prepare<[number], Row>('SELECT * FROM runs WHERE id = ?');
  const interrupt = db.prepare<[number]>(`UPDATE runs SET status = 'interrupted', finished_at = ? WHERE status = 'running'`);

  const toRecord = (r: Row): RunRecord => ({
    id: r.id,
    command: r.command,
    status: r.status as RunStatus,
    startedAt: isoOf(r.started_at),
    finishedAt: r.finished_at === null ? null : isoOf(r.finished_at),
    summary: r.summary_json === null ? null : (JSON.parse(r.summary_json) as unknown),
  });

  return {
    /** Starts a run; returns its id. */
    startRun(command: string): number {
      return Number(insert.run(command, nowMs()).lastInsertRowid);
    },
    /** Ends a running run with a status and a JSON-serialisable summary. */
    finishRun(runId: number, status: Exclude<RunStatus, 'running' | 'interrupted'>, summary: unknown): void {
      if (finish.run(status, nowMs(), JSON.stringify(summary ?? null), runId).changes === 0) {
        throw new KbsyncError('state_conflict', `run ${runId} is not running`);
      }
    },
    /** The newest run (of `command` when given), or null. */
    lastRun(command?: string): RunRecord | null {
      const r = command === undefined ? last.get() : lastOf.get(command);
      return r === undefined ? null : toRecord(r);
    },
    /** One run, or null. */
    getRun(runId: number): RunRecord | null {
      const r = byId.get(runId);
      return r === undefined ? null : toRecord(r);
    },
    /** Marks runs a dead process left 'running' as interrupted; returns how many. */
    interruptRunning(): number {
      return interrupt.run(nowMs()).changes;
    },
  };
}
