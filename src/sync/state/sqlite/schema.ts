import type { Database } from 'better-sqlite3';
import { KbsyncError } from '../../../shared/errors.js';

/** One schema step; `version` is the PRAGMA user_version after it ran. */
export type Migration = { version: number; name: string; up: (db: Database) => void };

/*
 * Schema v1. Compactness matters (the target is ≤ 300 bytes of state per tracked file at 100k files):
 * - files is WITHOUT ROWID keyed by (source_id, path): the path is stored once, no second index holds it.
 * - source names are interned in `sources`; sha256 is a 32-byte BLOB; times are INTEGER epoch ms.
 * - remote_name is NULL when it equals the path and "/" when it is "<source>/<path>" (see codec.ts).
 * - no index on files.sha256 or files.remote_id: lookups by content go through loadTrackedFiles()
 *   (the planner loads every row anyway); the rare SQL lookups scan (tens of ms at 100k rows).
 * - outbox holds open work (pending, in_flight, unknown) and failures; a done or cancelled op, and a
 *   failure a later op of the same kind and path superseded, is deleted when its run finishes (its
 *   outcome lives on in files and ledger). One small partial index covers open ops.
 * - ledger is append-only, two rows per paid call: 'reserve' before it, then 'spend' (the real charge,
 *   which closes the reservation) or 'release'. op_id is the outbox id (not a foreign key: done ops are
 *   pruned, hence AUTOINCREMENT: an id is never reused). period_day (UTC days since the epoch) is the day the credits count in — the reservation's —
 *   and at_day/at_month are derived from it without being stored.
 * - budget_totals keeps running sums per period ('run:<id>', 'day:YYYY-MM-DD', 'month:YYYY-MM') so
 *   reserve() is O(1); ledgerTotals() re-sums the ledger and verifyTotals() compares the two.
 */
const V1 = `
CREATE TABLE sources (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
) STRICT;

CREATE TABLE files (
  source_id          INTEGER NOT NULL REFERENCES sources(id),
  path               TEXT NOT NULL,
  size               INTEGER NOT NULL,
  mtime_ns           INTEGER NOT NULL,
  inode              INTEGER NOT NULL,
  sha256             BLOB NOT NULL CHECK (length(sha256) = 32),
  remote_name        TEXT,
  remote_id          TEXT,
  remote_status      TEXT CHECK (remote_status IN ('queued','processing','processed','failed','unknown')),
  reprocess_attempts INTEGER NOT NULL DEFAULT 0,
  last_action        TEXT,
  last_reason        TEXT,
  updated_at         INTEGER NOT NULL,
  PRIMARY KEY (source_id, path)
) STRICT, WITHOUT ROWID;

CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  command      TEXT NOT NULL,
  status       TEXT NOT NULL,
  started_at   INTEGER NOT NULL,
  finished_at  INTEGER,
  summary_json TEXT
) STRICT;

CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id          INTEGER REFERENCES runs(id),
  kind            TEXT NOT NULL CHECK (kind IN ('upload','reprocess','reindex')),
  source_id       INTEGER REFERENCES sources(id),
  path            TEXT,
  sha256          BLOB CHECK (sha256 IS NULL OR length(sha256) = 32),
  size            INTEGER,
  mtime_ns        INTEGER,
  inode           INTEGER,
  remote_name     TEXT,
  remote_id       TEXT,
  reason          TEXT,
  credits         INTEGER NOT NULL CHECK (credits >= 0),
  idempotency_key TEXT NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('pending','in_flight','done','failed','unknown','cancelled')),
  reserved        INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  reserved_at     INTEGER,
  error_code      TEXT,
  error           TEXT,
  attempts        INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX outbox_open ON outbox (state, source_id, path) WHERE state IN ('pending','in_flight','unknown');

CREATE TABLE ledger (
  id         INTEGER PRIMARY KEY,
  op_id      INTEGER NOT NULL,
  run_id     INTEGER NOT NULL REFERENCES runs(id),
  kind       TEXT NOT NULL CHECK (kind IN ('reserve','spend','release')),
  credits    INTEGER NOT NULL CHECK (credits >= 0),
  remote_id  TEXT,
  at         INTEGER NOT NULL,
  period_day INTEGER NOT NULL,
  at_day     TEXT GENERATED ALWAYS AS (date(period_day * 86400, 'unixepoch')) VIRTUAL,
  at_month   TEXT GENERATED ALWAYS AS (substr(date(period_day * 86400, 'unixepoch'), 1, 7)) VIRTUAL
) STRICT;

CREATE TABLE budget_totals (
  period   TEXT PRIMARY KEY,
  reserved INTEGER NOT NULL DEFAULT 0,
  spent    INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
`;

/*
 * v2: finishRun deletes old runs (runs.ts), and with foreign keys on SQLite checks each deleted run against
 * ledger.run_id: without an index that is a scan of the whole append-only ledger per run (growing
 * for ever). The index costs a few bytes per ledger row. outbox.run_id needs none: the outbox is
 * small and tidy() scans it after every run already.
 */
const V2 = 'CREATE INDEX ledger_run ON ledger (run_id)';

/*
 * v3: query and chat are paid calls too (1 credit each), so they go through the outbox and the ledger
 * like uploads: the kind CHECK gains 'query' and 'chat'. SQLite cannot alter a CHECK, so the table is
 * rebuilt (same columns, same order) and its AUTOINCREMENT high-water mark carried over: an op id,
 * which the ledger keeps after the op is pruned, must never be handed out again.
 */
function v3(db: Database): void {
  const seq = db.prepare<[], number>(`SELECT seq FROM sqlite_sequence WHERE name = 'outbox'`).pluck().get() ?? 0;
  const table = V1.slice(V1.indexOf('CREATE TABLE outbox ('), V1.indexOf('CREATE INDEX outbox_open'));
  const widened = table
    .replace('CREATE TABLE outbox (', 'CREATE TABLE outbox_v3 (')
    .replace(`CHECK (kind IN ('upload','reprocess','reindex'))`, `CHECK (kind IN ('upload','reprocess','reindex','query','chat'))`);
  if (widened === table.replace('CREATE TABLE outbox (', 'CREATE TABLE outbox_v3 ('))
    throw new Error('migration 3: the outbox kind CHECK was not found');
  db.exec(widened);
  db.exec('INSERT INTO outbox_v3 SELECT * FROM outbox; DROP TABLE outbox; ALTER TABLE outbox_v3 RENAME TO outbox;');
  db.exec(`CREATE INDEX outbox_open ON outbox (state, source_id, path) WHERE state IN ('pending','in_flight','unknown')`);
  const now = db.prepare<[], number>(`SELECT seq FROM sqlite_sequence WHERE name = 'outbox'`).pluck().get();
  if (now === undefined) db.prepare(`INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)`).run(seq);
  else if (now < seq) db.prepare(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'outbox'`).run(seq);
}

/*
 * v4: a state that knows no remote copy has not been checked against the dataset yet: created just now,
 * or recreated after the old one was lost (a `kbsync status` on a fresh runner creates it empty; a sync
 * that then failed may have recorded local-only rows, a duplicate or a skip, without any remote id). It is
 * marked so, in the same transaction that creates it, and the mark is cleared only by a rebuild from a
 * listing that succeeded (rebuild.ts): a run that could not list, or a command that never lists, leaves it
 * for the next sync, which then matches the dataset's copies instead of buying them again.
 */
export const REMOTE_CHECK_KEY = 'remote_check';
const V4 = `INSERT INTO meta (key, value) SELECT '${REMOTE_CHECK_KEY}', 'pending' WHERE NOT EXISTS (SELECT 1 FROM files WHERE remote_id IS NOT NULL)`;

/*
 * v5: webhook deliveries the daemon accepted (`kbsync watch --http`, POST /webhooks). The id is the
 * Standard Webhooks `webhook-id`: a delivery whose id is here is a replay and is refused, also after a
 * restart. Every accepted delivery is kept with its type, its signed timestamp (unix seconds) and, for
 * the kinds the daemon records (`intelligence.*`, `dataset.mode_changed`), its `data` object as JSON.
 */
const V5 = `
CREATE TABLE webhook_events (
  id          TEXT PRIMARY KEY,
  type        TEXT NOT NULL,
  sent_at     INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  data_json   TEXT
) STRICT, WITHOUT ROWID;
`;

/*
 * v6: the service's reason for a failed remote copy (its `error`), kept while the copy stays failed: its
 * code says whether a reprocess can help (docs/api.md), so a later plan does not pay to retry a file that
 * cannot change. NULL for every other row (one byte of record header).
 */
const V6 = 'ALTER TABLE files ADD COLUMN remote_error TEXT';
const V11 = 'ALTER TABLE files ADD COLUMN remote_chunks INTEGER';

/**
 * Widens the outbox's kind CHECK by `kinds`, keeping every row and the AUTOINCREMENT high-water mark (an op
 * id, which the ledger keeps after the op is pruned, is never handed out again). It reads the table as it
 * is now (sqlite_master), not as V1 wrote it, so steps that each add kinds compose in any order. SQLite
 * cannot alter a CHECK: the table is rebuilt with the same columns in the same order, and its index again.
 */
function widenOutboxKinds(db: Database, kinds: readonly string[], step: number): void {
  const sql = db.prepare<[], string>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'outbox'`).pluck().get();
  const check = sql === undefined ? null : /CHECK \(kind IN \(([^)]*)\)\)/.exec(sql);
  if (sql === undefined || check === null) throw new Error(`migration ${step}: the outbox kind CHECK was not found`);
  const known = (check[1] ?? '').split(',').map((k) => k.trim().replace(/^'|'$/g, ''));
  const all = [...known, ...kinds.filter((k) => !known.includes(k))];
  rebuildOutbox(db, sql.replace(check[0], `CHECK (kind IN (${all.map((k) => `'${k}'`).join(',')}))`));
}

/**
 * Rebuilds the outbox as `sql` (its CREATE TABLE, same columns in the same order), keeping every row,
 * its index and the AUTOINCREMENT high-water mark: an op id, which the ledger keeps after the op is
 * pruned, is never handed out again. SQLite cannot alter a CHECK in place.
 */
function rebuildOutbox(db: Database, sql: string): void {
  const seq = db.prepare<[], number>(`SELECT seq FROM sqlite_sequence WHERE name = 'outbox'`).pluck().get() ?? 0;
  db.exec(sql.replace(/^CREATE TABLE "?outbox"? \(/, 'CREATE TABLE outbox_rebuilt ('));
  db.exec('INSERT INTO outbox_rebuilt SELECT * FROM outbox; DROP TABLE outbox; ALTER TABLE outbox_rebuilt RENAME TO outbox;');
  db.exec(`CREATE INDEX outbox_open ON outbox (state, source_id, path) WHERE state IN ('pending','in_flight','unknown')`);
  const now = db.prepare<[], number>(`SELECT seq FROM sqlite_sequence WHERE name = 'outbox'`).pluck().get();
  if (now === undefined) db.prepare(`INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)`).run(seq);
  else if (now < seq) db.prepare(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'outbox'`).run(seq);
}

/*
 * v7: creating an agent (5 credits) and replacing its config (2 credits) are paid calls of the `agents`
 * commands, recorded and admitted against the budget like a query: the kind CHECK gains them.
 */
const v7 = (db: Database): void => widenOutboxKinds(db, ['agent_create', 'agent_config'], 7);

/*
 * v8: intelligence sources (`as: intelligence`). Their writes are paid calls, so they go through the outbox
 * and the ledger like uploads: the kind CHECK gains 'intelligence' (one entry) and 'intelligence_batch'
 * (up to 50), and a column holds what such an op writes (the agent and each entry's SHA-256, source and
 * path, as JSON): what reconciles an unknown outcome against the service's entry listing and what is
 * recorded once it is done. intel_entries is the content the dataset holds, one row per SHA-256 of an
 * entry's content (the service deduplicates by it across the whole dataset): the entry id, its status
 * (updated by the `intelligence.*` webhooks `watch --http` receives), and the source path it was first
 * written from.
 */
function v8(db: Database): void {
  widenOutboxKinds(db, ['intelligence', 'intelligence_batch'], 8);
  db.exec('ALTER TABLE outbox ADD COLUMN payload_json TEXT');
  db.exec(`
CREATE TABLE intel_entries (
  sha256     BLOB PRIMARY KEY CHECK (length(sha256) = 32),
  agent_id   TEXT NOT NULL,
  remote_id  TEXT,
  status     TEXT,
  error      TEXT,
  source_id  INTEGER REFERENCES sources(id),
  path       TEXT,
  title      TEXT,
  updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX intel_entries_remote ON intel_entries (remote_id);
`);
}

/*
 * v9: remote copies the dataset holds that no tracked row points at any more: a path's earlier content,
 * which stays in the dataset when the path moves on (the API has no delete). A path whose content
 * becomes that again is pointed back at the copy for free (the planner's `reuse`). Triggers keep the
 * table whatever writes `files`: a row that leaves a remote copy for another (or for none) records the
 * one it left, and a row that takes a copy removes it from here. One row per edit, not per file: a
 * tree synced once adds nothing. remote_name is stored as in `files` (codec.ts), for the row's source and path.
 */
const V9 = `
CREATE TABLE remote_copies (
  remote_id   TEXT PRIMARY KEY,
  sha256      BLOB NOT NULL CHECK (length(sha256) = 32),
  source_id   INTEGER NOT NULL REFERENCES sources(id),
  path        TEXT NOT NULL,
  remote_name TEXT,
  status      TEXT CHECK (status IN ('queued','processing','processed','failed','unknown'))
) STRICT, WITHOUT ROWID;
CREATE INDEX remote_copies_sha ON remote_copies (sha256);
CREATE TRIGGER files_copy_left AFTER UPDATE OF remote_id ON files
  WHEN OLD.remote_id IS NOT NULL AND OLD.remote_id IS NOT NEW.remote_id
BEGIN
  INSERT INTO remote_copies (remote_id, sha256, source_id, path, remote_name, status)
    VALUES (OLD.remote_id, OLD.sha256, OLD.source_id, OLD.path, OLD.remote_name, OLD.remote_status)
    ON CONFLICT (remote_id) DO UPDATE SET status = excluded.status;
END;
CREATE TRIGGER files_copy_taken AFTER UPDATE OF remote_id ON files
  WHEN NEW.remote_id IS NOT NULL AND NEW.remote_id IS NOT OLD.remote_id
BEGIN
  DELETE FROM remote_copies WHERE remote_id = NEW.remote_id;
END;
CREATE TRIGGER files_copy_inserted AFTER INSERT ON files
  WHEN NEW.remote_id IS NOT NULL
BEGIN
  DELETE FROM remote_copies WHERE remote_id = NEW.remote_id;
END;
`;

/*
 * v10: the outbox's kind is checked where a row is written (state-types.ts OP_KINDS, assertOpKind), not
 * by a CHECK: a new paid operation kind no longer needs a schema step. The table is rebuilt without it.
 */
function v10(db: Database): void {
  const sql = db.prepare<[], string>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'outbox'`).pluck().get();
  const check = sql === undefined ? null : / CHECK \(kind IN \([^)]*\)\)/.exec(sql);
  if (sql === undefined || check === null) throw new Error('migration 10: the outbox kind CHECK was not found');
  rebuildOutbox(db, sql.replace(check[0], ''));
}

/** Every schema step, in order. Append only: never edit a step that has shipped. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', up: (db) => db.exec(V1) },
  { version: 2, name: 'index ledger by run', up: (db) => db.exec(V2) },
  { version: 3, name: 'query and chat ops in the outbox', up: v3 },
  { version: 4, name: 'mark an empty state as not yet checked against the dataset', up: (db) => db.exec(V4) },
  { version: 5, name: 'webhook deliveries accepted by the daemon', up: (db) => db.exec(V5) },
  { version: 6, name: "keep the service's reason for a failed remote copy", up: (db) => db.exec(V6) },
  { version: 7, name: 'agent create and agent config ops in the outbox', up: v7 },
  { version: 8, name: 'intelligence entries, and their writes in the outbox', up: v8 },
  { version: 9, name: 'remote copies no tracked file points at any more', up: (db) => db.exec(V9) },
  { version: 10, name: 'outbox kinds checked where rows are written, not by a CHECK', up: v10 },
  { version: 11, name: 'the chunk count the service lists for a remote copy', up: (db) => db.exec(V11) },
];

/** Brings the database to the newest version in `migrations`; returns the version it started from. */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number {
  const version = (): number => db.pragma('user_version', { simple: true }) as number;
  let previous = 0;
  for (const step of migrations) {
    if (step.version !== previous + 1)
      throw new RangeError(`migrations must be numbered 1, 2, 3...; got ${step.version} after ${previous}`);
    previous = step.version;
  }
  const from = version();
  if (from > previous) {
    throw new KbsyncError(
      'state_version',
      `the state database has schema version ${from}, newer than this kbsync knows (${previous}); upgrade kbsync`,
    );
  }
  for (const step of migrations) {
    // Re-read the version under the write lock: another process may have migrated meanwhile.
    db.transaction(() => {
      if (version() >= step.version) return;
      step.up(db);
      db.pragma(`user_version = ${step.version}`);
    }).immediate();
  }
  return from;
}
