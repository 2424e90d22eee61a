import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { migrateChunks, rebuildSearchIndex, replaceChunks, searchChunks } from '../store/chunks.js';
import { reindexDataset } from './reindex.js';

let db: Database;

const integrityCheck = (): void => {
  db.prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run();
};

beforeEach(() => {
  db = new Sqlite(':memory:');
  migrateChunks(db);
  replaceChunks(db, { datasetId: 1, sourceId: 1, chunks: ['lighthouse keeper', 'harbour master', 'lighthouse lamp'] });
  replaceChunks(db, { datasetId: 1, sourceId: 1, chunks: ['lighthouse keeper', 'harbour master', 'lighthouse lamp', 'lighthouse stairs'] });
  replaceChunks(db, { datasetId: 2, sourceId: 2, chunks: ['lighthouse elsewhere'] });
});

afterEach(() => {
  db.close();
});

describe('reindexDataset', () => {
  it('returns the searchable chunk count and leaves the same results, once each', () => {
    const before = searchChunks(db, { datasetId: 1, query: 'lighthouse', topK: 10 });

    const result = reindexDataset(db, 1);
    const again = reindexDataset(db, 1);

    expect(result).toEqual({ chunks: 4 });
    expect(again).toEqual({ chunks: 4 });
    expect(searchChunks(db, { datasetId: 1, query: 'lighthouse', topK: 10 })).toEqual(before);
    expect(before.map((h) => h.chunkIndex)).toEqual([0, 2, 3]);
    expect(() => integrityCheck()).not.toThrow();
  });

  it('leaves other datasets alone', () => {
    reindexDataset(db, 1);

    expect(searchChunks(db, { datasetId: 2, query: 'lighthouse', topK: 10 }).map((h) => h.knowledgeSourceId)).toEqual([2]);
  });

  it('answers 0 chunks for an empty dataset', () => {
    expect(reindexDataset(db, 9)).toEqual({ chunks: 0 });
  });
});

describe('rebuildSearchIndex', () => {
  it('repairs an index that lost entries', () => {
    db.prepare(`INSERT INTO chunks_fts (chunks_fts, rowid, text) SELECT 'delete', id, text FROM chunks WHERE dataset_id = 1`).run();
    expect(searchChunks(db, { datasetId: 1, query: 'lighthouse', topK: 5 })).toEqual([]);

    rebuildSearchIndex(db);

    expect(searchChunks(db, { datasetId: 1, query: 'lighthouse', topK: 5 })).toHaveLength(3);
    expect(() => integrityCheck()).not.toThrow();
  });
});
