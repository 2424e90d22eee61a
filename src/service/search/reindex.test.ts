import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { migrateChunks, replaceChunks, searchChunks } from '../store/chunks.js';
import { reindexDataset } from './reindex.js';

let db: Database;

beforeEach(() => {
  db = new Sqlite(':memory:');
  migrateChunks(db);
  replaceChunks(db, { datasetId: 1, sourceId: 1, chunks: ['lighthouse keeper', 'harbour master', 'lighthouse lamp'] });
  replaceChunks(db, { datasetId: 2, sourceId: 2, chunks: ['lighthouse elsewhere'] });
});

afterEach(() => {
  db.close();
});

describe('reindexDataset', () => {
  it('rebuilds a dataset whose index lost its entries and returns the chunk count', () => {
    db.prepare('DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE dataset_id = 1)').run();
    expect(searchChunks(db, { datasetId: 1, query: 'lighthouse', topK: 5 })).toEqual([]);

    const result = reindexDataset(db, 1);

    expect(result).toEqual({ chunks: 3 });
    expect(searchChunks(db, { datasetId: 1, query: 'lighthouse', topK: 5 }).map((h) => h.chunkIndex).sort()).toEqual([0, 2]);
  });

  it('leaves no duplicate index entries when run twice, and leaves other datasets alone', () => {
    reindexDataset(db, 1);
    reindexDataset(db, 1);

    expect(searchChunks(db, { datasetId: 1, query: 'lighthouse', topK: 10 })).toHaveLength(2);
    expect(searchChunks(db, { datasetId: 2, query: 'lighthouse', topK: 10 })).toHaveLength(1);
    expect(db.prepare(`SELECT COUNT(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'lighthouse'`).get()).toEqual({ n: 3 });
  });

  it('answers 0 chunks for an empty dataset', () => {
    expect(reindexDataset(db, 9)).toEqual({ chunks: 0 });
  });
});
