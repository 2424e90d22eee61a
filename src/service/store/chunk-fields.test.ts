import { describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import { beginChunkReplace, migrateChunks, reindexChunks, replaceChunks, searchChunks } from './chunks.js';
import { filler, useChunkDb } from '../../../test/helpers/chunk-db.js';

const store = useChunkDb();
const sources = (q: string): number[] => searchChunks(store.db, { datasetId: 1, query: q, topK: 10 }).map((h) => h.knowledgeSourceId);

describe('fields of the full-text index', () => {
  it('ranks a chunk of a file named for the query word above one that only mentions it once more in its text', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 9, title: 'filler.md', chunks: filler(30) });
    // The same body words; the second file mentions "retry" twice, the first is named after it.
    replaceChunks(store.db, {
      datasetId: 1,
      sourceId: 1,
      title: 'notes.md',
      chunks: ['A retry happens after a failure; retry counts reset daily.'],
    });
    replaceChunks(store.db, {
      datasetId: 1,
      sourceId: 2,
      title: 'retry.md',
      chunks: ['A retry happens after a failure; the counts reset daily.'],
    });

    expect(sources('retry').slice(0, 2)).toEqual([2, 1]);
  });

  it('ranks a chunk whose heading path holds the query word above one with it as often in its body alone', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 9, chunks: filler(30) });
    const chunk = (heading: string, body: string) => ({ text: `${heading}\n${body}`, heading, firstRow: null, lastRow: null });
    replaceChunks(store.db, { datasetId: 1, sourceId: 1, chunks: [chunk('Usage', 'Set the proxy, then the proxy, then the proxy here.')] });
    const r = beginChunkReplace(store.db, { datasetId: 1, sourceId: 2 });
    r.add([chunk('Proxy', 'Set the proxy, then the timeout, then the port here.')]);
    r.commit();

    expect(sources('proxy').slice(0, 2)).toEqual([2, 1]);
  });

  it('finds a chunk by its file name alone, also after a reindex', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 9, title: 'filler.md', chunks: filler(5) });
    replaceChunks(store.db, {
      datasetId: 1,
      sourceId: 3,
      title: 'pagination-guide.md',
      chunks: ['How to walk through every page of results.'],
    });

    expect(sources('pagination')).toEqual([3]);
    reindexChunks(store.db, 1);
    expect(sources('pagination')).toEqual([3]);
  });

  it('rebuilds an index made before headings and titles were indexed, keeping every chunk searchable', () => {
    const old = new Sqlite(':memory:');
    try {
      // The schema as it was: one indexed column, no title column in chunks.
      old.exec(`
        CREATE TABLE chunk_generations (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset_id INTEGER NOT NULL, source_id INTEGER NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('staging', 'live', 'garbage')));
        CREATE TABLE chunks (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, source_id INTEGER NOT NULL, chunk_index INTEGER NOT NULL,
          text TEXT NOT NULL, generation INTEGER NOT NULL, heading TEXT, first_row INTEGER, last_row INTEGER);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content = 'chunks', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2');
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text); END;
        INSERT INTO chunk_generations (id, dataset_id, source_id, state) VALUES (1, 1, 4, 'live');
        INSERT INTO chunks (dataset_id, source_id, chunk_index, text, generation, heading) VALUES (1, 4, 0, 'Refunds\nMoney back within 30 days.', 1, 'Refunds');
      `);

      migrateChunks(old);

      const columns = (old.prepare(`SELECT name FROM pragma_table_info('chunks_fts')`).all() as { name: string }[]).map((c) => c.name);
      expect(columns).toEqual(['text', 'heading', 'title']);
      expect(searchChunks(old, { datasetId: 1, query: 'money', topK: 5 }).map((h) => h.text)).toEqual([
        'Refunds\nMoney back within 30 days.',
      ]);
      // The triggers are the new ones: a chunk written now is indexed with its title.
      replaceChunks(old, { datasetId: 1, sourceId: 5, title: 'shipping.md', chunks: ['Parcels leave on Mondays.'] });
      expect(searchChunks(old, { datasetId: 1, query: 'shipping', topK: 5 }).map((h) => h.knowledgeSourceId)).toEqual([5]);
    } finally {
      old.close();
    }
  });
});
