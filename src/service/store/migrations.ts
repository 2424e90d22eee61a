import type { Database } from 'better-sqlite3';
import { writeTransaction } from './write-transaction.js';

/**
 * The service-core schema, one entry per version. `PRAGMA user_version` records how many have run;
 * a new version is appended here, never edited in place.
 * Tables owned by other modules (chunks, webhooks) migrate themselves after these.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE datasets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    plan TEXT NOT NULL CHECK (plan IN ('free','basic','pro','team','enterprise')),
    credits INTEGER NOT NULL CHECK (credits >= 0),
    created_at TEXT NOT NULL
  );
  CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE knowledge_sources (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    kind TEXT NOT NULL CHECK (kind IN ('file','intelligence'))
  );
  CREATE INDEX knowledge_sources_dataset ON knowledge_sources(dataset_id);
  CREATE TABLE files (
    id INTEGER PRIMARY KEY REFERENCES knowledge_sources(id),
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued','processing','processed','failed')),
    error TEXT,
    chunk_count INTEGER,
    stored_path TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX files_dataset ON files(dataset_id, id);
  CREATE INDEX files_status ON files(status, id);
  CREATE TABLE agents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    config_json TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE agent_datasets (
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    mode TEXT NOT NULL CHECK (mode IN ('read_only','self_learning')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, dataset_id)
  );
  CREATE INDEX agent_datasets_dataset ON agent_datasets(dataset_id, agent_id);
  CREATE TABLE intelligence (
    id INTEGER PRIMARY KEY REFERENCES knowledge_sources(id),
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    agent_id INTEGER NOT NULL REFERENCES agents(id),
    title TEXT,
    content TEXT NOT NULL,
    metadata_json TEXT,
    sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending','processed','failed')),
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE UNIQUE INDEX intelligence_dedup ON intelligence(dataset_id, sha256);
  CREATE INDEX intelligence_status ON intelligence(status, id);
  CREATE TABLE idempotency (
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    key TEXT NOT NULL,
    fingerprint TEXT,
    state TEXT NOT NULL CHECK (state IN ('in_progress','done')),
    status INTEGER,
    body_json TEXT,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, key)
  );
  CREATE TABLE ledger (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    operation TEXT NOT NULL,
    delta_credits INTEGER NOT NULL,
    balance_after INTEGER NOT NULL,
    ref TEXT,
    created_at TEXT NOT NULL
  );
  CREATE INDEX ledger_dataset ON ledger(dataset_id, id);
  `,
  // The running service that holds a request's key or processes a file (store/owners.ts).
  `
  ALTER TABLE idempotency ADD COLUMN owner TEXT;
  ALTER TABLE files ADD COLUMN claimed_by TEXT;
  `,
  // A file's position in its dataset (seq, in id order, never renumbered) and the files per block of
  // 1024 positions (files_blocks): a page at any offset is a sum over blocks and one short seek (store/files.ts).
  `
  ALTER TABLE files ADD COLUMN seq INTEGER;
  UPDATE files SET seq = p.pos
    FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY dataset_id ORDER BY id) - 1 AS pos FROM files) AS p
    WHERE files.id = p.id;
  CREATE UNIQUE INDEX files_dataset_seq ON files(dataset_id, seq);
  CREATE TABLE files_blocks (
    dataset_id INTEGER NOT NULL,
    block INTEGER NOT NULL,
    n INTEGER NOT NULL CHECK (n > 0),
    PRIMARY KEY (dataset_id, block)
  ) WITHOUT ROWID;
  INSERT INTO files_blocks (dataset_id, block, n) SELECT dataset_id, seq >> 10, COUNT(*) FROM files GROUP BY dataset_id, seq >> 10;
  CREATE TRIGGER files_seq_insert AFTER INSERT ON files BEGIN
    UPDATE files SET seq = (SELECT COALESCE(MAX(seq), -1) + 1 FROM files WHERE dataset_id = NEW.dataset_id) WHERE id = NEW.id;
    INSERT INTO files_blocks (dataset_id, block, n) VALUES (NEW.dataset_id, (SELECT seq FROM files WHERE id = NEW.id) >> 10, 1)
      ON CONFLICT (dataset_id, block) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER files_seq_delete AFTER DELETE ON files BEGIN
    DELETE FROM files_blocks WHERE dataset_id = OLD.dataset_id AND block = OLD.seq >> 10 AND n = 1;
    UPDATE files_blocks SET n = n - 1 WHERE dataset_id = OLD.dataset_id AND block = OLD.seq >> 10;
  END;
  `,
];

/** The schema version this code writes. */
export const CORE_SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the core tables up to CORE_SCHEMA_VERSION, each step in its own transaction. */
export function migrateCore(db: Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > CORE_SCHEMA_VERSION) {
    throw new Error(`service.db schema version ${current} is newer than this kbsync (${CORE_SCHEMA_VERSION})`);
  }
  for (let version = current; version < CORE_SCHEMA_VERSION; version++) {
    const sql = MIGRATIONS[version] as string;
    writeTransaction(db, () => {
      db.exec(sql);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
