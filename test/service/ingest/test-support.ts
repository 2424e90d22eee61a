// Test support only (imported by *.test.ts): a real SQLite file in a temp dir with the tables the
// worker touches, created with exactly the columns of the team brief.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { migrateChunks } from '../../../src/service/store/chunks.js';
import { expect } from 'vitest';
import { isKbsyncError } from '../../../src/shared/errors.js';
import type { Parser, ParseOptions, Section } from '../../../src/service/ingest/types.js';

export type TestDb = { db: Database; dir: string; path: string; reopen(): Database; cleanup(): void };

const TABLES = `
CREATE TABLE IF NOT EXISTS files (
  id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, name TEXT NOT NULL, size INTEGER NOT NULL,
  sha256 TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('queued','processing','processed','failed')),
  error TEXT, chunk_count INTEGER, stored_path TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, claimed_by TEXT
);
CREATE TABLE IF NOT EXISTS intelligence (
  id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, agent_id INTEGER NOT NULL, title TEXT,
  content TEXT NOT NULL, metadata_json TEXT, sha256 TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','processed','failed')), error TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
`;

function open(path: string): Database {
  const db = new Sqlite(path);
  db.pragma('journal_mode = WAL');
  db.exec(TABLES);
  migrateChunks(db);
  return db;
}

/** A fresh database file in a new temp dir; `cleanup()` closes it and removes the dir. */
export function createTestDb(): TestDb {
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-search-'));
  const path = join(dir, 'service.db');
  const t: TestDb = {
    db: open(path),
    dir,
    path,
    reopen() {
      t.db.close();
      t.db = open(path);
      return t.db;
    },
    cleanup() {
      if (t.db.open) t.db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

let nextId = 1000;

/** Writes `content` as a stored blob and inserts a `files` row (status `queued` unless given); returns its id. */
export function addFile(t: TestDb, f: { name: string; content: string | Buffer; datasetId?: number; status?: string }): number {
  const id = nextId++;
  const storedPath = join(t.dir, `blob-${id}`);
  writeFileSync(storedPath, f.content);
  const now = '2025-01-01T00:00:00.000Z';
  t.db
    .prepare(
      `INSERT INTO files (id, dataset_id, name, size, sha256, status, stored_path, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'x', ?, ?, ?, ?)`,
    )
    .run(id, f.datasetId ?? 1, f.name, Buffer.byteLength(f.content), f.status ?? 'queued', storedPath, now, now);
  return id;
}

/** Inserts a `pending` intelligence entry; returns its id. */
export function addEntry(t: TestDb, e: { content: string; title?: string; datasetId?: number; agentId?: number }): number {
  const id = nextId++;
  const now = '2025-01-01T00:00:00.000Z';
  t.db
    .prepare(
      `INSERT INTO intelligence (id, dataset_id, agent_id, title, content, sha256, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
    )
    .run(id, e.datasetId ?? 1, e.agentId ?? 7, e.title ?? null, e.content, `sha-${id}`, now, now);
  return id;
}

/** A file row's processing columns. */
export function fileRow(db: Database, id: number): { status: string; error: string | null; chunk_count: number | null; attempts: number } {
  return db.prepare('SELECT status, error, chunk_count, attempts FROM files WHERE id = ?').get(id) as never;
}

/** A temp file with this content (in a new temp dir); returns its path and a cleanup. */
export function tempFile(name: string, content: string | Buffer): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-parse-'));
  const path = join(dir, name);
  writeFileSync(path, content);
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every section a parser yields for this content. */
export async function parseContent(parser: Parser, name: string, content: string | Buffer, options?: ParseOptions): Promise<Section[]> {
  const f = tempFile(name, content);
  try {
    const out: Section[] = [];
    for await (const s of parser.parse(f.path, options)) out.push(s);
    return out;
  } finally {
    f.cleanup();
  }
}

/** The records of record sections, in order. */
export function recordsOf(sections: Section[]): string[] {
  return sections.flatMap((s) => ('records' in s ? s.records : []));
}

/** The message of the parse_failed error `promise` rejects with (a test fails if it resolves or fails otherwise). */
export async function parseFailure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isKbsyncError(err, 'parse_failed')).toBe(true);
  return (err as Error).message;
}
