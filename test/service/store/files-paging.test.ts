import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openServiceDb } from '../../../src/service/store/db.js';
import { insertDataset } from '../../../src/service/store/datasets.js';
import { insertFile, listFiles } from '../../../src/service/store/files.js';

let dir: string;
let db: Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kbsync-files-paging-'));
  db = openServiceDb(join(dir, 'service.db'));
});
afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

const NOW = '2025-01-01T00:00:00.000Z';
const dataset = (name: string): number => insertDataset(db, { name, plan: 'enterprise', credits: 0, createdAt: NOW });

function add(datasetId: number, count: number): void {
  db.transaction(() => {
    for (let i = 0; i < count; i++) insertFile(db, { datasetId, name: `f${i}.md`, size: 1, sha256: 'x', storedPath: '/nowhere', now: NOW });
  })();
}

/** The dataset's ids in the order the API promises: by id. */
const allIds = (datasetId: number): number[] =>
  db.prepare('SELECT id FROM files WHERE dataset_id = ? ORDER BY id').pluck().all(datasetId) as number[];

/** Every page shape that matters: pages of several sizes from offsets at, before and after block edges, and past the end. */
function expectPagesExact(datasetId: number): void {
  const ids = allIds(datasetId);
  const offsets = new Set([0, 1, 1023, 1024, 1025, 2047, 2048, ids.length - 1, ids.length, ids.length + 5]);
  for (let o = 0; o < ids.length; o += 397) offsets.add(o);
  for (const offset of offsets) {
    if (offset < 0) continue;
    for (const limit of [1, 10, 1000, 10_000]) {
      const page = listFiles(db, datasetId, { limit, offset });
      expect(page.total).toBe(ids.length);
      expect(
        page.rows.map((r) => r.id),
        `offset ${offset} limit ${limit}`,
      ).toEqual(ids.slice(offset, offset + limit));
    }
  }
}

/** Walks the whole dataset page by page, as a client does. */
function walk(datasetId: number, limit: number): number[] {
  const seen: number[] = [];
  for (let offset = 0; ; offset += limit) {
    const { rows } = listFiles(db, datasetId, { limit, offset });
    if (rows.length === 0) return seen;
    seen.push(...rows.map((r) => r.id));
  }
}

describe('listFiles paging', () => {
  it('pages exactly in id order across inserts, deletes and re-inserts, datasets interleaved', () => {
    const a = dataset('a');
    const b = dataset('b');
    for (let round = 0; round < 3; round++) {
      add(a, 1100);
      add(b, 300);
    }
    expectPagesExact(a);
    expectPagesExact(b);

    // Deletes in the middle of a block, a whole block, the first and the last files.
    const ids = allIds(a);
    const gone = [...ids.slice(5, 40), ...ids.slice(1024, 2048 + 3), ids[0], ids.at(-1)] as number[];
    const del = db.prepare('DELETE FROM files WHERE id = ?');
    db.transaction(() => gone.forEach((id) => del.run(id)))();
    expectPagesExact(a);
    expectPagesExact(b);
    expect(walk(a, 1000)).toEqual(allIds(a));

    // New files come after the survivors, even where the deleted last file was.
    add(a, 1500);
    expectPagesExact(a);
    expect(walk(a, 777)).toEqual(allIds(a));

    // Everything deleted, then filled again.
    db.prepare('DELETE FROM files WHERE dataset_id = ?').run(a);
    expect(listFiles(db, a, { limit: 1000, offset: 0 })).toEqual({ rows: [], total: 0 });
    add(a, 50);
    expectPagesExact(a);
    expectPagesExact(b);
  });

  it('pages a database written by the schema before positions once it is migrated', () => {
    const a = dataset('a');
    const b = dataset('b');
    for (let round = 0; round < 4; round++) {
      add(a, 700);
      add(b, 20);
    }
    const del = db.prepare('DELETE FROM files WHERE id = ?');
    for (const id of allIds(a).filter((_, i) => i % 3 === 0)) del.run(id);
    const before = allIds(a);
    // Back to schema version 2: no positions, no blocks, no triggers.
    db.exec(`
      DROP TRIGGER files_seq_insert; DROP TRIGGER files_seq_delete; DROP TABLE files_blocks;
      DROP INDEX files_dataset_seq; ALTER TABLE files DROP COLUMN seq; PRAGMA user_version = 2;
    `);
    db.close();
    db = openServiceDb(join(dir, 'service.db'));
    expect(allIds(a)).toEqual(before);
    expectPagesExact(a);
    expectPagesExact(b);
    add(a, 1200);
    expectPagesExact(a);
    expect(walk(a, 1000)).toEqual(allIds(a));
  });
});
