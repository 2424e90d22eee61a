import { hostname } from 'node:os';
import { KbsyncError } from '../../../shared/errors.js';
import { isoOf } from '../../tracked/codec.js';
import { RUNS_KEPT } from '../retention.js';
import type { RunRecord, RunStatus } from '../state-types.js';
import type { Db } from './db.js';
import type { PgIdentity } from './outbox.js';
import { LOCK_CLASS } from './schema.js';
import { runOfRow, type RunRow } from '../rows.js';

/** A runner as `kbsync status` shows it: every process that wrote to the shared state. */
export type RunnerRecord = {
  id: number;
  host: string;
  pid: number;
  /** The sources it syncs (comma-separated names). */
  scope: string;
  startedAt: string;
  lastRunAt: string | null;
  runs: number;
  /** Credits it spent (ledger spend rows of its runs). */
  spent: number;
  /** Credits its ops hold reserved now. */
  reserved: number;
  /** True while its process holds its lock (alive). */
  alive: boolean;
};

/**
 * Registers this process as a runner and takes its liveness lock: a session advisory lock on its id,
 * which PostgreSQL releases when the connection ends, however the process ended.
 */
export async function registerRunner(db: Db, scope: string): Promise<number> {
  // The lock first, then the row: no one ever sees this runner's row without its lock held.
  const id = (await db.q<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('runners', 'id')) AS id`))[0]?.id as number;
  await db.q('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, id]);
  await db.run('INSERT INTO runners (id, host, pid, scope, started_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, $5)', [
    id,
    hostname(),
    process.pid,
    scope,
    db.nowMs(),
  ]);
  return id;
}

/**
 * The per-source writer locks are advisory locks on one 64-bit key: hashtextextended(name, SOURCE_LOCK_SEED).
 * A 32-bit key (the two-int form, hashtext) let two source names collide and refuse each other (one
 * pair in some tens of thousands of names is likely); with 64 bits a collision is out of reach. The one-bigint form is
 * its own key space in pg_locks (objsubid 1), apart from the two-int locks of LOCK_CLASS (runners, migrations).
 */
const SOURCE_LOCK_SEED = 0x6b63; // "kc"
/** The SQL of a source's lock key, the source name being `$1`. */
const SOURCE_KEY = `hashtextextended($1, ${SOURCE_LOCK_SEED})`;

/**
 * How long a source held by another session is waited for before the refusal: a runner killed with -9
 * and restarted at once finds its old session still there until the server notices the closed socket.
 */
const SOURCE_LOCK_WAIT_MS = 3000;

/** Tries the lock of source `name` every 100 ms for up to `waitMs`; true once held. */
async function tryLockFor(db: Db, name: string, waitMs: number): Promise<boolean> {
  const until = Date.now() + waitMs;
  for (;;) {
    const rows = await db.q<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${SOURCE_KEY}) AS ok`, [name]);
    if (rows[0]?.ok === true) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Takes a session advisory lock on each source of `scope` (comma-separated names): one writer per source
 * on a shared state, as the SQLite state's lock file allows one writer per file. Two runners syncing the
 * same source name from two folders would take each other's files for deleted ones. PostgreSQL releases
 * the locks when the connection ends, however the process ended. Throws KbsyncError 'state_locked' naming
 * the source and the live runner that holds it; the locks already taken are released first.
 */
export async function lockSources(db: Db, scope: string): Promise<void> {
  const names = scope === '' ? [] : scope.split(',');
  const taken: string[] = [];
  for (const name of names) {
    if (await tryLockFor(db, name, SOURCE_LOCK_WAIT_MS)) {
      taken.push(name);
      continue;
    }
    for (const t of taken) await db.q(`SELECT pg_advisory_unlock(${SOURCE_KEY})`, [t]);
    const holders = await db.q<{ id: number; host: string; pid: number; scope: string; started_at: number }>(
      `SELECT id, host, pid, scope, started_at FROM runners WHERE $1 = ANY(string_to_array(scope, ',')) ORDER BY id DESC`,
      [name],
    );
    const live = await liveRunners(
      db,
      holders.map((h) => h.id),
    );
    const holder = holders.find((h) => live.has(h.id));
    const who =
      holder === undefined
        ? 'another runner'
        : `runner #${holder.id} (host ${holder.host}, pid ${holder.pid}, sources ${holder.scope}, started ${isoOf(holder.started_at)})`;
    throw new KbsyncError(
      'state_locked',
      `the source "${name}" is being synced by ${who} on this PostgreSQL state: one runner per source name at a time. ` +
        "Wait for it or stop it, or give this runner's sources distinct names (docs/scale.md)",
    );
  }
}

/**
 * The runners among `ids` whose process still holds its liveness lock, read from pg_locks (taking
 * nothing: a check never makes a live runner look dead to another check).
 */
export async function liveRunners(db: Db, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.q<{ id: number }>(
    `SELECT objid::bigint AS id FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted
        AND mode = 'ExclusiveLock' AND objid::bigint = ANY($2::bigint[])`,
    [LOCK_CLASS, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * What dead runners left: their in-flight ops become 'unknown' (reservations kept, to be checked
 * against the service by the next runner of their scope) and their running runs 'interrupted'. A
 * runner is dead when its liveness lock can be taken. Returns how many ops were recovered.
 */
export async function recoverDeadRunners(db: Db, myId: number): Promise<number> {
  const suspects = await db.q<{ id: number }>(
    `SELECT id FROM runners WHERE id <> $1 AND (id IN (SELECT runner_id FROM outbox WHERE state = 'in_flight')
       OR id IN (SELECT runner_id FROM runs WHERE status = 'running'))`,
    [myId],
  );
  // Runners that never wrote anything (a plan, a status) and are gone: forgotten, so the list stays short.
  const idle = await db.q<{ id: number }>(
    `SELECT id FROM runners r WHERE id <> $1 AND NOT EXISTS (SELECT 1 FROM runs WHERE runner_id = r.id)
       AND NOT EXISTS (SELECT 1 FROM outbox WHERE runner_id = r.id) AND NOT EXISTS (SELECT 1 FROM content_claims WHERE runner_id = r.id)
     ORDER BY id LIMIT 100`,
    [myId],
  );
  const idleAlive = await liveRunners(
    db,
    idle.map((r) => r.id),
  );
  const gone = idle.map((r) => r.id).filter((id) => !idleAlive.has(id));
  if (gone.length > 0)
    await db.run(
      `DELETE FROM runners r WHERE id = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM runs WHERE runner_id = r.id)
         AND NOT EXISTS (SELECT 1 FROM outbox WHERE runner_id = r.id) AND NOT EXISTS (SELECT 1 FROM content_claims WHERE runner_id = r.id)`,
      [gone],
    );
  let recovered = 0;
  const alive = await liveRunners(
    db,
    suspects.map((r) => r.id),
  );
  for (const { id } of suspects) {
    if (alive.has(id)) continue;
    // A dead runner's in-flight work: several openers may do this at once; the second finds nothing left to change.
    recovered += await db.tx(async () => {
      const at = db.nowMs();
      await db.run(`UPDATE runs SET status = 'interrupted', finished_at = $1 WHERE runner_id = $2 AND status = 'running'`, [at, id]);
      return db.run(
        `UPDATE outbox SET state = 'unknown', error_code = 'unknown_outcome', error = 'kbsync stopped while the call was in flight',
           updated_at = $1 WHERE runner_id = $2 AND state = 'in_flight'`,
        [at, id],
      );
    });
  }
  return recovered;
}

/** A runner with no live session and no sign of life (`last_seen_at`: its open, each run's start) for this long is long gone. */
const RUNNER_GONE_MS = 24 * 3600 * 1000;

/**
 * Folds the long-gone runners of this runner's sources (the same scope; dead, not seen for RUNNER_GONE_MS,
 * no call in flight) into it: their runs and ops become this runner's (so the scope's last run, its
 * history and its spend stay where `status` and `lastRun` look for them), their content claims no
 * one's (a claim of a dead runner is an orphan either way), and their rows go. Without it every
 * `kbsync sync` from cron left a row for ever. Runs at open and after each run (pruned there as the
 * runner's own, RUNS_KEPT). Returns how many rows went.
 */
export async function foldGoneRunners(db: Db, me: PgIdentity): Promise<number> {
  if (me.runnerId === null) return 0;
  const old = await db.q<{ id: number }>(
    `SELECT id FROM runners r WHERE id <> $1 AND scope = $2 AND last_seen_at < $3
       AND NOT EXISTS (SELECT 1 FROM outbox WHERE runner_id = r.id AND state = 'in_flight') ORDER BY id LIMIT 1000`,
    [me.runnerId, me.scope, db.nowMs() - RUNNER_GONE_MS],
  );
  const live = await liveRunners(
    db,
    old.map((r) => r.id),
  );
  const gone = old.map((r) => r.id).filter((id) => !live.has(id));
  if (gone.length === 0) return 0;
  return db.tx(async () => {
    await db.run('UPDATE runs SET runner_id = $1 WHERE runner_id = ANY($2::bigint[])', [me.runnerId, gone]);
    await db.run('UPDATE outbox SET runner_id = $1 WHERE runner_id = ANY($2::bigint[])', [me.runnerId, gone]);
    await db.run('UPDATE content_claims SET runner_id = NULL WHERE runner_id = ANY($1::bigint[])', [gone]);
    return db.run('DELETE FROM runners WHERE id = ANY($1::bigint[])', [gone]);
  });
}

/** The `runs` table on PostgreSQL; the last run is this scope's. */
export function createPgRuns(db: Db, me: PgIdentity) {
  return {
    async startRun(command: string): Promise<number> {
      const rows = await db.q<{ id: number }>(
        `INSERT INTO runs (runner_id, command, status, started_at) VALUES ($1, $2, 'running', $3) RETURNING id`,
        [me.runnerId, command, db.nowMs()],
      );
      if (me.runnerId !== null) await db.run('UPDATE runners SET last_seen_at = $1 WHERE id = $2', [db.nowMs(), me.runnerId]);
      return (rows[0] as { id: number }).id;
    },
    finishRun: (runId: number, status: Exclude<RunStatus, 'running' | 'interrupted'>, summary: unknown): Promise<void> =>
      db.tx(async () => {
        const n = await db.run(`UPDATE runs SET status = $1, finished_at = $2, summary_json = $3 WHERE id = $4 AND status = 'running'`, [
          status,
          db.nowMs(),
          JSON.stringify(summary ?? null),
          runId,
        ]);
        if (n === 0) throw new KbsyncError('state_conflict', `run ${runId} is not running`);
        // This runner's old finished runs beyond the newest RUNS_KEPT go, unless ledger or outbox rows refer to them.
        await db.run(
          `DELETE FROM runs WHERE runner_id IS NOT DISTINCT FROM $1 AND status <> 'running'
             AND id < (SELECT coalesce(min(id), 0) FROM (SELECT id FROM runs WHERE runner_id IS NOT DISTINCT FROM $1 AND status <> 'running'
                       ORDER BY id DESC LIMIT ${RUNS_KEPT}) AS kept)
             AND NOT EXISTS (SELECT 1 FROM ledger WHERE ledger.run_id = runs.id)
             AND NOT EXISTS (SELECT 1 FROM outbox WHERE outbox.run_id = runs.id)`,
          [me.runnerId],
        );
      }),
    async lastRun(command?: string): Promise<RunRecord | null> {
      const rows = await db.q<RunRow>(
        `SELECT runs.id, command, status, runs.started_at, finished_at, summary_json FROM runs JOIN runners ON runners.id = runs.runner_id
          WHERE runners.scope = $1 AND ($2::text IS NULL OR command = $2) ORDER BY runs.id DESC LIMIT 1`,
        [me.scope, command ?? null],
      );
      return rows[0] === undefined ? null : runOfRow(rows[0]);
    },
    async getRun(runId: number): Promise<RunRecord | null> {
      const rows = await db.q<RunRow>('SELECT id, command, status, started_at, finished_at, summary_json FROM runs WHERE id = $1', [runId]);
      return rows[0] === undefined ? null : runOfRow(rows[0]);
    },
    /** Every runner that wrote to the state (a run or an op), newest first, with its last run and its spend. */
    async runners(): Promise<RunnerRecord[]> {
      const rows = await db.q<{
        id: number;
        host: string;
        pid: number;
        scope: string;
        started_at: number;
        last_run: number | null;
        runs: number;
        spent: number;
        reserved: number;
      }>(
        `SELECT r.id, r.host, r.pid, r.scope, r.started_at,
                (SELECT max(started_at) FROM runs WHERE runner_id = r.id) AS last_run,
                (SELECT count(*)::int FROM runs WHERE runner_id = r.id) AS runs,
                (SELECT coalesce(sum(l.credits), 0)::bigint FROM ledger l JOIN runs ru ON ru.id = l.run_id
                  WHERE ru.runner_id = r.id AND l.kind = 'spend') AS spent,
                (SELECT coalesce(sum(reserved), 0)::bigint FROM outbox WHERE runner_id = r.id) AS reserved
           FROM runners r WHERE EXISTS (SELECT 1 FROM runs WHERE runner_id = r.id) OR EXISTS (SELECT 1 FROM outbox WHERE runner_id = r.id)
          ORDER BY r.id DESC`,
      );
      const out: RunnerRecord[] = [];
      const live = await liveRunners(
        db,
        rows.map((r) => r.id),
      );
      for (const r of rows) {
        const alive = live.has(r.id);
        out.push({
          id: r.id,
          host: r.host,
          pid: r.pid,
          scope: r.scope,
          startedAt: isoOf(r.started_at),
          lastRunAt: r.last_run === null ? null : isoOf(r.last_run),
          runs: r.runs,
          spent: r.spent,
          reserved: r.reserved,
          alive,
        });
      }
      return out;
    },
  };
}
