import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { KbsyncError } from '../../../shared/errors.js';
import { ALL_COLUMNS, fileSelect, rowValues } from '../../tracked/fields.js';
import { openSqliteState } from './open.js';
import { SNAPSHOT_OP_COLUMNS, snapshotOpValues, type StateSnapshot } from '../snapshot.js';

/**
 * Reads a whole SQLite state file as a snapshot. The file's lock is held meanwhile (no kbsync may be
 * writing it; what a dead one left in flight is turned 'unknown' first, as any open does).
 */
export function readSqliteSnapshot(path: string): StateSnapshot {
  if (!existsSync(path)) throw new KbsyncError('state_unavailable', `no state file at ${path}`);
  const held = openSqliteState(path);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const hex = (b: Buffer | null): string | null => (b === null ? null : b.toString('hex'));
    const files = db
      .prepare(`SELECT s.name AS source, ${fileSelect('sqlite')} FROM files JOIN sources s ON s.id = files.source_id`)
      .all() as StateSnapshot['files'];
    const outbox = db
      .prepare(
        `SELECT o.id, run_id, kind, s.name AS source, path, sha256, size, CAST(mtime_ns AS TEXT) AS mtime_ns, inode, remote_name, remote_id,
           reason, credits, idempotency_key, state, reserved, reserved_at, error_code, error, attempts, created_at, updated_at, payload_json
           FROM outbox o LEFT JOIN sources s ON s.id = o.source_id ORDER BY o.id`,
      )
      .all() as (Omit<StateSnapshot['outbox'][number], 'sha256'> & { sha256: Buffer | null })[];
    return {
      files,
      runs: db
        .prepare('SELECT id, command, status, started_at, finished_at, summary_json FROM runs ORDER BY id')
        .all() as StateSnapshot['runs'],
      outbox: outbox.map((o) => ({ ...o, sha256: hex(o.sha256) })),
      ledger: db
        .prepare('SELECT id, op_id, run_id, kind, credits, remote_id, at, period_day FROM ledger ORDER BY id')
        .all() as StateSnapshot['ledger'],
      budgetTotals: db.prepare('SELECT period, reserved, spent FROM budget_totals').all() as StateSnapshot['budgetTotals'],
      meta: db.prepare('SELECT key, value FROM meta').all() as StateSnapshot['meta'],
      webhookEvents: db
        .prepare('SELECT id, type, sent_at, received_at, data_json FROM webhook_events')
        .all() as StateSnapshot['webhookEvents'],
      intelEntries: (
        db
          .prepare(
            `SELECT e.sha256, agent_id, remote_id, status, error, s.name AS source, path, title, updated_at
               FROM intel_entries e LEFT JOIN sources s ON s.id = e.source_id`,
          )
          .all() as (Omit<StateSnapshot['intelEntries'][number], 'sha256'> & { sha256: Buffer })[]
      ).map((e) => ({ ...e, sha256: e.sha256.toString('hex') })),
      remoteCopies: (
        db
          .prepare(
            `SELECT c.remote_id, c.sha256, s.name AS source, c.path, c.remote_name, c.status
               FROM remote_copies c JOIN sources s ON s.id = c.source_id ORDER BY c.remote_id`,
          )
          .all() as (Omit<StateSnapshot['remoteCopies'][number], 'sha256'> & { sha256: Buffer })[]
      ).map((c) => ({ ...c, sha256: c.sha256.toString('hex') })),
    };
  } finally {
    db.close();
    held.close();
  }
}

/** Writes a snapshot into a new SQLite state file at `path` (refused when a file is there already). */
export function writeSqliteSnapshot(path: string, s: StateSnapshot): void {
  if (existsSync(path)) throw new KbsyncError('state_conflict', `${path} exists already: migrate into a new state file`);
  const held = openSqliteState(path); // creates it: folder 0700, file 0600, the current schema; held locked meanwhile
  const db = new Database(path, { fileMustExist: true });
  try {
    db.transaction(() => {
      const sourceIds = new Map<string, number>();
      const insertSource = db.prepare<[string], { id: number }>('INSERT INTO sources (name) VALUES (?) RETURNING id');
      const idOf = (name: string): number => {
        let id = sourceIds.get(name);
        if (id === undefined) {
          id = (insertSource.get(name) as { id: number }).id;
          sourceIds.set(name, id);
        }
        return id;
      };
      const blob = (hex: string | null): Buffer | null => (hex === null ? null : Buffer.from(hex, 'hex'));
      const file = db.prepare(
        `INSERT INTO files (source_id, ${ALL_COLUMNS.join(', ')}) VALUES (?, ${ALL_COLUMNS.map(() => '?').join(',')})`,
      );
      for (const f of s.files) file.run(idOf(f.source), ...rowValues(f, (ns) => ns));
      const run = db.prepare('INSERT INTO runs (id, command, status, started_at, finished_at, summary_json) VALUES (?,?,?,?,?,?)');
      for (const r of s.runs) run.run(r.id, r.command, r.status, r.started_at, r.finished_at, r.summary_json);
      const op = db.prepare(`INSERT INTO outbox (id, run_id, source_id, sha256, mtime_ns, ${SNAPSHOT_OP_COLUMNS})
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`);
      for (const o of s.outbox)
        op.run(
          o.id,
          o.run_id,
          o.source === null ? null : idOf(o.source),
          blob(o.sha256),
          o.mtime_ns === null ? null : BigInt(o.mtime_ns),
          ...snapshotOpValues(o),
        );
      const maxOp = s.outbox.reduce(
        (m, o) => Math.max(m, o.id),
        s.ledger.reduce((m, l) => Math.max(m, l.op_id), 0),
      );
      db.prepare(`DELETE FROM sqlite_sequence WHERE name = 'outbox'`).run();
      db.prepare(`INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)`).run(maxOp);
      const ledger = db.prepare(
        'INSERT INTO ledger (id, op_id, run_id, kind, credits, remote_id, at, period_day) VALUES (?,?,?,?,?,?,?,?)',
      );
      for (const l of s.ledger) ledger.run(l.id, l.op_id, l.run_id, l.kind, l.credits, l.remote_id, l.at, l.period_day);
      const total = db.prepare('INSERT INTO budget_totals (period, reserved, spent) VALUES (?,?,?)');
      for (const t of s.budgetTotals) total.run(t.period, t.reserved, t.spent);
      db.prepare('DELETE FROM meta').run();
      const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?,?)');
      for (const m of s.meta) meta.run(m.key, m.value);
      const hook = db.prepare('INSERT INTO webhook_events (id, type, sent_at, received_at, data_json) VALUES (?,?,?,?,?)');
      for (const w of s.webhookEvents) hook.run(w.id, w.type, w.sent_at, w.received_at, w.data_json);
      const entry = db.prepare(`INSERT INTO intel_entries (sha256, agent_id, remote_id, status, error, source_id, path, title, updated_at)
        VALUES (?,?,?,?,?,?,?,?,?)`);
      for (const e of s.intelEntries)
        entry.run(
          blob(e.sha256),
          e.agent_id,
          e.remote_id,
          e.status,
          e.error,
          e.source === null ? null : idOf(e.source),
          e.path,
          e.title,
          e.updated_at,
        );
      const copy = db.prepare('INSERT INTO remote_copies (remote_id, sha256, source_id, path, remote_name, status) VALUES (?,?,?,?,?,?)');
      for (const c of s.remoteCopies) copy.run(c.remote_id, blob(c.sha256), idOf(c.source), c.path, c.remote_name, c.status);
    }).immediate();
  } finally {
    db.close();
    held.close();
  }
}
