import { KbsyncError } from '../../../shared/errors.js';
import type { Db } from './db.js';

/*
 * The PostgreSQL state, shared by every runner of one dataset. The same tables as the SQLite state
 * (sqlite/schema.ts), plus what sharing needs:
 * - runners: one row per process that opened the state to write (host, pid, the sources it syncs);
 *   while it lives it holds the session advisory lock (RUNNER_LOCK, id), which PostgreSQL releases
 *   when its connection ends, killed or not: whoever opens next can tell a dead runner from a live one.
 * - outbox.scope: the sources of the runner that queued the op. A runner sees, reserves and
 *   reconciles only the ops of its own scope: a killed runner's work waits for the next runner of
 *   the same sources, who can read those files and check them against the service.
 * - content_claims: one row per content hash bought (or being bought) in the dataset. An upload
 *   claims its hash in the transaction that reserves its credits; a second runner with the same
 *   content finds the claim and reuses the first one's copy instead of paying again.
 * - budget_totals: one row per period, locked (SELECT ... FOR UPDATE) by every reservation: the
 *   rule spent + reserved + cost <= cap holds across processes and machines.
 * Times are epoch ms (bigint); sha256 is 32 bytes (bytea).
 */
const V1 = `
CREATE TABLE runners (
  id           bigserial PRIMARY KEY,
  host         text NOT NULL,
  pid          integer NOT NULL,
  scope        text NOT NULL,
  started_at   bigint NOT NULL,
  last_seen_at bigint NOT NULL
);
CREATE TABLE sources (
  id   serial PRIMARY KEY,
  name text NOT NULL UNIQUE
);
CREATE TABLE files (
  source_id          integer NOT NULL REFERENCES sources(id),
  path               text COLLATE "C" NOT NULL,
  size               bigint NOT NULL,
  mtime_ns           bigint NOT NULL,
  inode              bigint NOT NULL,
  sha256             bytea NOT NULL CHECK (length(sha256) = 32),
  remote_name        text,
  remote_id          text,
  remote_status      text CHECK (remote_status IN ('queued','processing','processed','failed','unknown')),
  reprocess_attempts integer NOT NULL DEFAULT 0,
  last_action        text,
  last_reason        text,
  updated_at         bigint NOT NULL,
  remote_error       text,
  PRIMARY KEY (source_id, path)
);
CREATE INDEX files_remote_id ON files (remote_id) WHERE remote_id IS NOT NULL;
CREATE TABLE runs (
  id           bigserial PRIMARY KEY,
  runner_id    bigint REFERENCES runners(id),
  command      text NOT NULL,
  status       text NOT NULL,
  started_at   bigint NOT NULL,
  finished_at  bigint,
  summary_json text
);
CREATE TABLE outbox (
  id              bigserial PRIMARY KEY,
  run_id          bigint REFERENCES runs(id),
  runner_id       bigint REFERENCES runners(id),
  scope           text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('upload','reprocess','reindex','query','chat','agent_create','agent_config','intelligence','intelligence_batch')),
  source_id       integer REFERENCES sources(id),
  path            text,
  sha256          bytea CHECK (sha256 IS NULL OR length(sha256) = 32),
  size            bigint,
  mtime_ns        bigint,
  inode           bigint,
  remote_name     text,
  remote_id       text,
  reason          text,
  credits         integer NOT NULL CHECK (credits >= 0),
  idempotency_key text NOT NULL,
  state           text NOT NULL CHECK (state IN ('pending','in_flight','done','failed','unknown','cancelled')),
  reserved        integer NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  reserved_at     bigint,
  error_code      text,
  error           text,
  attempts        integer NOT NULL DEFAULT 0,
  created_at      bigint NOT NULL,
  updated_at      bigint NOT NULL,
  payload_json    text
);
CREATE INDEX outbox_open ON outbox (scope, state, source_id, path) WHERE state IN ('pending','in_flight','unknown');
CREATE INDEX outbox_path ON outbox (source_id, path);
CREATE TABLE ledger (
  id         bigserial PRIMARY KEY,
  op_id      bigint NOT NULL,
  run_id     bigint NOT NULL REFERENCES runs(id),
  kind       text NOT NULL CHECK (kind IN ('reserve','spend','release')),
  credits    integer NOT NULL CHECK (credits >= 0),
  remote_id  text,
  at         bigint NOT NULL,
  period_day integer NOT NULL
);
CREATE INDEX ledger_run ON ledger (run_id);
CREATE INDEX ledger_op ON ledger (op_id);
CREATE TABLE budget_totals (
  period   text PRIMARY KEY,
  reserved bigint NOT NULL DEFAULT 0,
  spent    bigint NOT NULL DEFAULT 0
);
CREATE TABLE meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE webhook_events (
  id          text PRIMARY KEY,
  type        text NOT NULL,
  sent_at     bigint NOT NULL,
  received_at bigint NOT NULL,
  data_json   text
);
CREATE TABLE content_claims (
  sha256     bytea PRIMARY KEY CHECK (length(sha256) = 32),
  op_id      bigint NOT NULL,
  runner_id  bigint REFERENCES runners(id),
  state      text NOT NULL CHECK (state IN ('claimed','done')),
  remote_id  text,
  remote_name text,
  claimed_at bigint NOT NULL
);
CREATE TABLE intel_entries (
  sha256     bytea PRIMARY KEY CHECK (length(sha256) = 32),
  agent_id   text NOT NULL,
  remote_id  text,
  status     text,
  error      text,
  source_id  integer REFERENCES sources(id),
  path       text,
  title      text,
  updated_at bigint NOT NULL
);
CREATE INDEX intel_entries_remote ON intel_entries (remote_id);
INSERT INTO meta (key, value) VALUES ('remote_check', 'pending');
`;

/*
 * v2: remote copies the dataset holds that no tracked row points at any more (see the SQLite state's v9,
 * sqlite/schema.ts): the planner's `reuse`. One trigger on `files` keeps it, whichever runner writes the row.
 */
const V2 = `
CREATE TABLE remote_copies (
  remote_id   text PRIMARY KEY,
  sha256      bytea NOT NULL CHECK (length(sha256) = 32),
  source_id   integer NOT NULL REFERENCES sources(id),
  path        text COLLATE "C" NOT NULL,
  remote_name text,
  status      text CHECK (status IN ('queued','processing','processed','failed','unknown'))
);
CREATE INDEX remote_copies_sha ON remote_copies (sha256);
CREATE FUNCTION kbsync_files_copies() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.remote_id IS NOT NULL AND OLD.remote_id IS DISTINCT FROM NEW.remote_id THEN
    INSERT INTO remote_copies (remote_id, sha256, source_id, path, remote_name, status)
      VALUES (OLD.remote_id, OLD.sha256, OLD.source_id, OLD.path, OLD.remote_name, OLD.remote_status)
      ON CONFLICT (remote_id) DO UPDATE SET status = excluded.status;
  END IF;
  IF NEW.remote_id IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.remote_id IS DISTINCT FROM OLD.remote_id) THEN
    DELETE FROM remote_copies WHERE remote_id = NEW.remote_id;
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER files_copies AFTER INSERT OR UPDATE OF remote_id ON files FOR EACH ROW EXECUTE FUNCTION kbsync_files_copies();
`;

/*
 * v3: the outbox's kind is checked where a row is written (state-types.ts OP_KINDS, assertOpKind), so a
 * new paid operation kind needs no schema step. The CHECK of v1 on the kind is dropped, whatever its name.
 */
const V3 = `
DO $$
DECLARE c text;
BEGIN
  FOR c IN SELECT conname FROM pg_constraint
    WHERE conrelid = 'outbox'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%(kind = ANY%'
  LOOP
    EXECUTE format('ALTER TABLE outbox DROP CONSTRAINT %I', c);
  END LOOP;
END
$$;
`;

/*
 * v5: every runner's open asks which runners hold no content claim (runs.ts, the idle runners it
 * deletes), and deleting a runner checks the claims' foreign key: without an index each was a scan of
 * content_claims, one row per content ever bought. Few runners own many claims each: the btree's
 * deduplication keeps the index small.
 */
const V5 = 'CREATE INDEX content_claims_runner ON content_claims (runner_id)';

/** One PostgreSQL schema step. Append only: never edit a step that has shipped. */
type PgMigration = { version: number; name: string; sql: string };

/** Every PostgreSQL schema step, in order (independent of the SQLite numbering: the two schemas differ). */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  { version: 1, name: 'initial shared schema', sql: V1 },
  { version: 2, name: 'remote copies no tracked file points at any more', sql: V2 },
  { version: 3, name: 'outbox kinds checked where rows are written, not by a CHECK', sql: V3 },
  { version: 4, name: 'the chunk count the service lists for a remote copy', sql: 'ALTER TABLE files ADD COLUMN remote_chunks integer' },
  { version: 5, name: "index content claims by runner: a runner's open looks for claimless runners", sql: V5 },
];

/** The advisory-lock class of kbsync's locks (the first key of the two-int form). */
export const LOCK_CLASS = 0x6b62; // "kb"
/** The second key of the lock migrations hold. */
const MIGRATION_LOCK = 0;

/**
 * Brings the schema to the newest version; returns the version it started from. Safe when several
 * processes start at once: each step runs in a transaction holding a transaction-scoped advisory
 * lock, and the version is read again under it, so one process migrates and the others find it done.
 */
export async function migratePg(db: Db, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number> {
  const newest = migrations.at(-1)?.version ?? 0;
  return db.tx(async () => {
    await db.q('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK]);
    await db.run('CREATE TABLE IF NOT EXISTS kbsync_schema (version integer NOT NULL)');
    const rows = await db.q<{ version: number }>('SELECT version FROM kbsync_schema');
    const from = rows[0]?.version ?? 0;
    if (rows.length === 0) await db.run('INSERT INTO kbsync_schema (version) VALUES (0)');
    if (from > newest)
      throw new KbsyncError(
        'state_version',
        `the PostgreSQL state has schema version ${from}, newer than this kbsync knows (${newest}); upgrade kbsync`,
      );
    for (const step of migrations) {
      if (step.version <= from) continue;
      await db.q(step.sql);
      await db.run('UPDATE kbsync_schema SET version = $1', [step.version]);
    }
    return from;
  });
}
