import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { beginChunkReplace } from '../../src/service/store/chunks.js';
import { openServiceDb } from '../../src/service/store/db.js';
import { insertDataset } from '../../src/service/store/datasets.js';
import { insertFile } from '../../src/service/store/files.js';
import { insertInProgress, resetIdempotency } from '../../src/service/store/idempotency.js';
import { instanceAlive } from '../../src/service/store/owners.js';
import { claimNextFile, requeueProcessingFiles } from '../../src/service/store/processing.js';
import { writeTransaction } from '../../src/service/store/write-transaction.js';
import { tempDir } from './helpers.js';

/*
 * The work a service holds on a shared service.db (a file it processes, the chunks it writes, a
 * request's idempotency key) is repaired by another start only once its owner no longer runs.
 */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const LIVE = `${process.pid}-alive`;
// No process has this pid (above any pid_max).
const DEAD = '999999999-gone';

function open(owner?: string): { db: Database.Database; path: string } {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  const path = join(dir.path, 'service.db');
  const db = openServiceDb(path, owner);
  cleanups.push(() => db.close());
  return { db, path };
}

/** A second connection to `path`, for `owner` (the start of another service on the folder). */
function another(path: string, owner?: string): Database.Database {
  const db = openServiceDb(path, owner);
  cleanups.push(() => db.close());
  return db;
}

function withFile(db: Database.Database): number {
  const datasetId = insertDataset(db, { name: 'd', plan: 'basic', credits: 0, createdAt: 'now' });
  insertFile(db, { datasetId, name: 'a.md', size: 1, sha256: 'x', storedPath: '/nowhere', now: 'now' });
  return datasetId;
}

describe('instanceAlive', () => {
  it('is true for an id of this process, false for a dead pid, none, or another form', () => {
    expect([LIVE, DEAD, null, 'garbage', `${process.pid}`].map(instanceAlive)).toEqual([true, false, false, false, false]);
  });
});

describe('what another start repairs', () => {
  it('a file processed by a running service stays its own; one of a service that stopped is queued again', () => {
    const { db, path } = open(LIVE);
    withFile(db);
    expect(claimNextFile(db, 'now')?.id).toBeDefined();
    expect(requeueProcessingFiles(another(path, 'x'), 'later')).toBe(0);

    const gone = open(DEAD);
    withFile(gone.db);
    claimNextFile(gone.db, 'now');
    expect(requeueProcessingFiles(another(gone.path), 'later')).toBe(1);
  });

  it('chunks a running service is writing stay staging through another open; a stopped one’s become garbage', () => {
    const { db, path } = open(LIVE);
    beginChunkReplace(db, { datasetId: 1, sourceId: 5 }).add(['staged']);
    const gone = open(DEAD);
    beginChunkReplace(gone.db, { datasetId: 1, sourceId: 5 }).add(['staged']);
    another(path);
    another(gone.path);

    const state = (d: Database.Database): unknown => d.prepare('SELECT state FROM chunk_generations').pluck().all();
    expect([state(db), state(gone.db)]).toEqual([['staging'], ['garbage']]);
  });

  it('a running request’s idempotency key stays; a stopped service’s is dropped', () => {
    const { db, path } = open(LIVE);
    const datasetId = withFile(db);
    insertInProgress(db, { datasetId, key: 'mine', fingerprint: null, nowMs: 1000 });
    const gone = another(path, DEAD);
    insertInProgress(gone, { datasetId, key: 'theirs', fingerprint: null, nowMs: 1000 });
    resetIdempotency(another(path), 0);

    expect(db.prepare('SELECT key FROM idempotency').pluck().all()).toEqual(['mine']);
  });
});

describe('writeTransaction', () => {
  it('holds the write lock from its start: a read, another connection’s write, then its own write commits', () => {
    const { db, path } = open(LIVE);
    const datasetId = withFile(db);
    const other = new Database(path, { timeout: 0 });
    cleanups.push(() => other.close());
    const otherWrite = (): unknown => {
      try {
        return other.prepare(`UPDATE files SET error = 'other'`).run().changes;
      } catch (err) {
        return (err as { code?: string }).code;
      }
    };
    let seen: unknown;
    writeTransaction(db, () => {
      db.prepare('SELECT count(*) FROM files').get();
      seen = otherWrite();
      db.prepare('UPDATE datasets SET credits = 5 WHERE id = ?').run(datasetId);
    })();

    expect(seen).toBe('SQLITE_BUSY');
    expect(db.prepare('SELECT credits FROM datasets').pluck().get()).toBe(5);
  });
});
