import { hostname } from 'node:os';
import { KbsyncError } from '../../../shared/errors.js';
import { SNAPSHOT_OP_COLUMNS, snapshotOpValues, type StateSnapshot } from '../snapshot.js';
import { ALL_COLUMNS, fileSelect, PG_TYPES, rowValues } from '../../tracked/fields.js';
import type { Db } from './db.js';
import type { PgSources } from './sources.js';

const CHUNK = 5000;
const LEDGER_FIELDS = ['id', 'op_id', 'run_id', 'kind', 'credits', 'remote_id', 'at', 'period_day'] as const;

/** The snapshot's ledger rows, one statement per chunk: row by row, a million files' ledger took minutes. */
async function insertLedger(db: Db, ledger: StateSnapshot['ledger']): Promise<void> {
  for (let i = 0; i < ledger.length; i += CHUNK) {
    const part = ledger.slice(i, i + CHUNK);
    await db.run(
      `INSERT INTO ledger (id, op_id, run_id, kind, credits, remote_id, at, period_day)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::bigint[], $8::int[])`,
      LEDGER_FIELDS.map((k) => part.map((l) => l[k])),
    );
  }
}

/** `kbsync state migrate` on PostgreSQL: the whole state out as a snapshot, or a snapshot into an empty state. */
export function createPgTransfer(db: Db, sources: PgSources) {
  return {
    exportSnapshot: (): Promise<StateSnapshot> =>
      db.tx(async () => {
        await db.run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        return {
          files: await db.q(`SELECT s.name AS source, ${fileSelect('pg')} FROM files JOIN sources s ON s.id = files.source_id`),
          runs: await db.q('SELECT id, command, status, started_at, finished_at, summary_json FROM runs ORDER BY id'),
          outbox:
            await db.q(`SELECT o.id, run_id, kind, s.name AS source, path, encode(sha256, 'hex') AS sha256, size, mtime_ns::text AS mtime_ns,
              inode, remote_name, remote_id, reason, credits, idempotency_key, state, reserved, reserved_at, error_code, error, attempts,
              created_at, updated_at, payload_json FROM outbox o LEFT JOIN sources s ON s.id = o.source_id ORDER BY o.id`),
          ledger: await db.q('SELECT id, op_id, run_id, kind, credits, remote_id, at, period_day FROM ledger ORDER BY id'),
          budgetTotals: await db.q('SELECT period, reserved, spent FROM budget_totals'),
          meta: await db.q('SELECT key, value FROM meta'),
          webhookEvents: await db.q('SELECT id, type, sent_at, received_at, data_json FROM webhook_events'),
          intelEntries: await db.q(`SELECT encode(e.sha256, 'hex') AS sha256, agent_id, remote_id, status, error, s.name AS source, path,
              title, updated_at FROM intel_entries e LEFT JOIN sources s ON s.id = e.source_id`),
          remoteCopies: await db.q(`SELECT c.remote_id, encode(c.sha256, 'hex') AS sha256, s.name AS source, c.path, c.remote_name, c.status
              FROM remote_copies c JOIN sources s ON s.id = c.source_id ORDER BY c.remote_id COLLATE "C"`),
        } as StateSnapshot;
      }),
    /**
     * Writes a snapshot into this (empty) state, ids kept, as the work of one runner of `scope` (its
     * pending and unknown ops are the next such runner's); every bought content is claimed for reuse.
     */
    importSnapshot: (s: StateSnapshot, scope: string, from: string): Promise<void> =>
      db.tx(async () => {
        const used = await db.q(
          'SELECT 1 FROM files UNION ALL SELECT 1 FROM runs UNION ALL SELECT 1 FROM outbox UNION ALL SELECT 1 FROM ledger LIMIT 1',
        );
        if (used.length > 0) throw new KbsyncError('state_conflict', 'the PostgreSQL state is not empty: migrate into a new database');
        const at = db.nowMs();
        const runner = await db.q<{ id: number }>(
          'INSERT INTO runners (host, pid, scope, started_at, last_seen_at) VALUES ($1, $2, $3, $4, $4) RETURNING id',
          [`${hostname()} (migrated from ${from})`, process.pid, scope, at],
        );
        const runnerId = (runner[0] as { id: number }).id;
        for (let i = 0; i < s.files.length; i += CHUNK) {
          const part = s.files.slice(i, i + CHUNK);
          const ids: number[] = [];
          for (const f of part) ids.push(await sources.idOf(f.source));
          const cols: unknown[][] = [ids, ...ALL_COLUMNS.map(() => [])];
          for (const f of part) rowValues(f, (ns) => ns.toString()).forEach((v, c) => (cols[c + 1] as unknown[]).push(v));
          const types = ['int', ...PG_TYPES];
          await db.run(
            `INSERT INTO files (source_id, ${ALL_COLUMNS.join(', ')}) SELECT * FROM unnest(${types.map((t, c) => `$${c + 1}::${t}[]`).join(', ')})`,
            cols,
          );
        }
        for (const r of s.runs)
          await db.run(
            'INSERT INTO runs (id, runner_id, command, status, started_at, finished_at, summary_json) VALUES ($1,$2,$3,$4,$5,$6,$7)',
            [r.id, runnerId, r.command, r.status, r.started_at, r.finished_at, r.summary_json],
          );
        for (const o of s.outbox)
          await db.run(
            `INSERT INTO outbox (id, run_id, runner_id, scope, source_id, sha256, mtime_ns, ${SNAPSHOT_OP_COLUMNS})
             VALUES ($1,$2,$3,$4,$5,decode($6, 'hex'),$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25)`,
            [
              o.id,
              o.run_id,
              runnerId,
              scope,
              o.source === null ? null : await sources.idOf(o.source),
              o.sha256,
              o.mtime_ns,
              ...snapshotOpValues(o),
            ],
          );
        await insertLedger(db, s.ledger);
        for (const t of s.budgetTotals)
          await db.run('INSERT INTO budget_totals (period, reserved, spent) VALUES ($1,$2,$3)', [t.period, t.reserved, t.spent]);
        await db.run('DELETE FROM meta');
        for (const m of s.meta) await db.run('INSERT INTO meta (key, value) VALUES ($1,$2)', [m.key, m.value]);
        for (const w of s.webhookEvents)
          await db.run('INSERT INTO webhook_events (id, type, sent_at, received_at, data_json) VALUES ($1,$2,$3,$4,$5)', [
            w.id,
            w.type,
            w.sent_at,
            w.received_at,
            w.data_json,
          ]);
        for (const e of s.intelEntries)
          await db.run(
            `INSERT INTO intel_entries (sha256, agent_id, remote_id, status, error, source_id, path, title, updated_at)
             VALUES (decode($1, 'hex'),$2,$3,$4,$5,$6,$7,$8,$9)`,
            [
              e.sha256,
              e.agent_id,
              e.remote_id,
              e.status,
              e.error,
              e.source === null ? null : await sources.idOf(e.source),
              e.path,
              e.title,
              e.updated_at,
            ],
          );
        for (const c of s.remoteCopies)
          await db.run(
            `INSERT INTO remote_copies (remote_id, sha256, source_id, path, remote_name, status) VALUES ($1, decode($2, 'hex'), $3, $4, $5, $6)`,
            [c.remote_id, c.sha256, await sources.idOf(c.source), c.path, c.remote_name, c.status],
          );
        // Content bought already: a later upload of it anywhere in the dataset reuses that copy.
        await db.run(
          `INSERT INTO content_claims (sha256, op_id, runner_id, state, remote_id, remote_name, claimed_at)
          SELECT DISTINCT ON (f.sha256) f.sha256, 0, $1::bigint, 'done', f.remote_id,
                 CASE WHEN f.remote_name IS NULL THEN f.path WHEN f.remote_name = '/' THEN s.name || '/' || f.path ELSE f.remote_name END,
                 $2::bigint
            FROM files f JOIN sources s ON s.id = f.source_id
           WHERE f.remote_id IS NOT NULL ORDER BY f.sha256, f.updated_at DESC ON CONFLICT (sha256) DO NOTHING`,
          [runnerId, at],
        );
        // The sequences go on after the ids brought in: an op or run id is never handed out twice.
        for (const [table, column] of [
          ['runs', 'id'],
          ['outbox', 'id'],
          ['ledger', 'id'],
        ] as const) {
          await db.q(`SELECT setval(pg_get_serial_sequence('${table}', '${column}'), greatest((SELECT max(${column}) FROM ${table}), 1))`);
        }
        const maxOp = s.ledger.reduce((m, l) => Math.max(m, l.op_id), 0);
        await db.q(
          `SELECT setval(pg_get_serial_sequence('outbox', 'id'), greatest((SELECT coalesce(max(id), 1) FROM outbox), $1::bigint, 1))`,
          [maxOp],
        );
      }),
  };
}
