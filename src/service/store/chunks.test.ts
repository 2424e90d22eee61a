import { beforeEach, describe, expect, it, vi } from 'vitest';
import { beginChunkReplace, collectChunkGarbage, countChunks, deleteChunks, migrateChunks, replaceChunks, searchChunks } from './chunks.js';
import { filler, useChunkDb } from '../../../test/helpers/chunk-db.js';

const store = useChunkDb();

describe('migrateChunks', () => {
  it('uses the FTS5 of the bundled SQLite and can run twice', () => {
    migrateChunks(store.db);

    const fts = store.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'`).get() as { sql: string };
    expect(fts.sql).toMatch(/USING fts5/i);
    expect(store.db.prepare(`SELECT 1 AS ok FROM pragma_compile_options WHERE compile_options = 'ENABLE_FTS5'`).get()).toEqual({ ok: 1 });
  });

  it('retires chunks left staging by an interrupted run, for the garbage collector', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['live alpha'] });
    beginChunkReplace(store.db, { datasetId: 1, sourceId: 5 }).add(['staged alpha']);

    migrateChunks(store.db);
    const collected = collectChunkGarbage(store.db, 100);

    expect(collected).toBe(1);
    expect(store.db.prepare('SELECT text FROM chunks').all()).toEqual([{ text: 'live alpha' }]);
    expect(store.db.prepare(`SELECT state FROM chunk_generations`).all()).toEqual([{ state: 'live' }]);
  });
});

describe('replaceChunks / deleteChunks / countChunks', () => {
  it('replaces a source’s chunks and numbers them from 0', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['old one', 'old two', 'old three'] });

    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['new one', 'new two'] });
    collectChunkGarbage(store.db, 100);

    expect(store.db.prepare('SELECT chunk_index, text FROM chunks ORDER BY chunk_index').all()).toEqual([
      { chunk_index: 0, text: 'new one' },
      { chunk_index: 1, text: 'new two' },
    ]);
    expect(searchChunks(store.db, { datasetId: 1, query: 'old', topK: 5 })).toEqual([]);
    expect(countChunks(store.db, 1)).toBe(2);
  });

  it('hides the old chunks from search and count as soon as they are replaced', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['old one', 'old two', 'old three'] });

    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['new one'] });

    expect(searchChunks(store.db, { datasetId: 1, query: 'old', topK: 5 })).toEqual([]);
    expect(searchChunks(store.db, { datasetId: 1, query: 'new', topK: 5 }).map((h) => h.text)).toEqual(['new one']);
    expect(countChunks(store.db, 1)).toBe(1);
  });

  it('takes a source’s chunks out of search at once, and out of the table and index at collection', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['zebra crossing'] });
    replaceChunks(store.db, { datasetId: 1, sourceId: 6, chunks: ['zebra herd'] });

    expect(deleteChunks(store.db, 5)).toBe(1);

    expect(searchChunks(store.db, { datasetId: 1, query: 'zebra', topK: 5 }).map((h) => h.knowledgeSourceId)).toEqual([6]);
    expect(countChunks(store.db, 1)).toBe(1);
    expect(collectChunkGarbage(store.db, 100)).toBe(1);
    expect(store.db.prepare(`SELECT COUNT(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'zebra'`).get()).toEqual({ n: 1 });
  });

  it('collects retired generations a batch at a time, then their generation rows', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['a1', 'a2', 'a3', 'a4', 'a5'] });
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['b1'] });

    const batches = [
      collectChunkGarbage(store.db, 2),
      collectChunkGarbage(store.db, 2),
      collectChunkGarbage(store.db, 2),
      collectChunkGarbage(store.db, 2),
    ];

    expect(batches).toEqual([2, 2, 1, 0]);
    expect(() => store.db.prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run()).not.toThrow();
    expect(store.db.prepare('SELECT text FROM chunks').all()).toEqual([{ text: 'b1' }]);
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM chunk_generations').get()).toEqual({ n: 1 });
  });

  it('rolls the whole replacement back when one insert fails', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['kept text'] });

    expect(() => replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['fine', null as unknown as string] })).toThrow();

    expect(store.db.prepare('SELECT text FROM chunks').all()).toEqual([{ text: 'kept text' }]);
  });
});

describe('beginChunkReplace', () => {
  it('keeps old chunks searchable and new ones invisible until commit', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['version one walrus'] });
    const replace = beginChunkReplace(store.db, { datasetId: 1, sourceId: 5 });
    replace.add(['version two walrus', 'more walrus']);

    const during = searchChunks(store.db, { datasetId: 1, query: 'walrus', topK: 5 }).map((h) => h.text);
    let countInTx = -1;
    const count = replace.commit((n) => {
      countInTx = n;
    });

    expect(during).toEqual(['version one walrus']);
    expect(count).toBe(2);
    expect(countInTx).toBe(2);
    expect(
      searchChunks(store.db, { datasetId: 1, query: 'walrus', topK: 5 })
        .map((h) => h.text)
        .sort(),
    ).toEqual(['more walrus', 'version two walrus']);
  });

  it('leaves the old chunks when aborted', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 5, chunks: ['original walrus'] });
    const replace = beginChunkReplace(store.db, { datasetId: 1, sourceId: 5 });
    replace.add(['half done walrus']);

    replace.abort();
    collectChunkGarbage(store.db, 100);

    expect(store.db.prepare('SELECT text FROM chunks').all()).toEqual([{ text: 'original walrus' }]);
    expect(searchChunks(store.db, { datasetId: 1, query: 'walrus', topK: 5 }).map((h) => h.text)).toEqual(['original walrus']);
  });
});

describe('durability of staging writes', () => {
  it('writes staging batches and garbage deletes with synchronous = NORMAL, then restores the connection setting', () => {
    store.db.pragma('synchronous = FULL');
    const replace = beginChunkReplace(store.db, { datasetId: 1, sourceId: 5 });
    const pragmas = vi.spyOn(store.db, 'pragma');

    replace.add(['staged one', 'staged two']);
    const afterAdd = store.db.pragma('synchronous', { simple: true });
    replace.abort();
    collectChunkGarbage(store.db, 10);

    const settings = pragmas.mock.calls.map(([source]) => source).filter((source) => source.startsWith('synchronous ='));
    expect(settings).toEqual(['synchronous = NORMAL', 'synchronous = 2', 'synchronous = NORMAL', 'synchronous = 2']);
    expect(afterAdd).toBe(2);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM chunks').get()).toEqual({ n: 0 });
  });

  it('writes a staging batch inside an outer transaction without touching the setting', () => {
    store.db.pragma('synchronous = EXTRA');
    const replace = beginChunkReplace(store.db, { datasetId: 1, sourceId: 5 });

    store.db.transaction(() => replace.add(['inside a transaction']))();
    replace.commit();

    expect(store.db.pragma('synchronous', { simple: true })).toBe(3);
    expect(countChunks(store.db, 1)).toBe(1);
  });
});

describe('searchChunks', () => {
  beforeEach(() => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 10, chunks: filler(30) });
    replaceChunks(store.db, {
      datasetId: 1,
      sourceId: 11,
      chunks: [
        'The refund policy allows returns within 30 days.',
        'Shipping is free over 50 euros.',
        'Refunds are paid to the original card.',
      ],
    });
    replaceChunks(store.db, { datasetId: 2, sourceId: 20, chunks: ['refund policy of another dataset'] });
  });

  it('ranks chunks matching more query terms first, scores in [0, 1], descending', () => {
    const hits = searchChunks(store.db, { datasetId: 1, query: 'refund policy', topK: 5 });

    expect(hits.map((h) => [h.knowledgeSourceId, h.chunkIndex])).toEqual([
      [11, 0],
      [11, 2],
    ]);
    expect(hits[0]?.text).toBe('The refund policy allows returns within 30 days.');
    for (const h of hits) expect(h.score > 0 && h.score <= 1).toBe(true);
    expect((hits[0]?.score ?? 0) > (hits[1]?.score ?? 1)).toBe(true);
  });

  it('matches word forms through the Porter stemmer and ignores case and accents', () => {
    replaceChunks(store.db, { datasetId: 1, sourceId: 12, chunks: ['Le café était fermé.'] });

    expect(
      searchChunks(store.db, { datasetId: 1, query: 'REFUNDED', topK: 5 })
        .map((h) => h.chunkIndex)
        .sort(),
    ).toEqual([0, 2]);
    expect(searchChunks(store.db, { datasetId: 1, query: 'cafe', topK: 5 }).map((h) => h.knowledgeSourceId)).toEqual([12]);
  });

  it('sees only the given dataset', () => {
    expect(searchChunks(store.db, { datasetId: 2, query: 'refund', topK: 5 }).map((h) => h.knowledgeSourceId)).toEqual([20]);
    expect(searchChunks(store.db, { datasetId: 3, query: 'refund', topK: 5 })).toEqual([]);
  });

  it('returns at most topK hits, and only those at or above scoreThreshold', () => {
    const all = searchChunks(store.db, { datasetId: 1, query: 'filler gardening', topK: 20 });
    const threshold = all[4]?.score ?? 0;

    expect(all).toHaveLength(20);
    expect(searchChunks(store.db, { datasetId: 1, query: 'filler gardening', topK: 3 })).toEqual(all.slice(0, 3));
    expect(searchChunks(store.db, { datasetId: 1, query: 'refund', topK: 5, scoreThreshold: 1 })).toEqual([]);
    expect(
      searchChunks(store.db, { datasetId: 1, query: 'refund policy', topK: 20, scoreThreshold: threshold }).every(
        (h) => h.score >= threshold,
      ),
    ).toBe(true);
  });

  it.each([
    '"',
    '"refund',
    'refund"',
    '*',
    'refund*',
    'NEAR(refund policy, 2)',
    'refund NEAR policy',
    '-refund',
    'text:refund',
    'chunks_fts:refund',
    '^refund',
    'refund AND OR NOT',
    '(refund',
    "'; DROP TABLE chunks; --",
    '\u0000refund\u0000',
    'refund '.repeat(5000),
    '🙂 refund',
  ])('treats hostile query %j as plain words', (query) => {
    const hits = searchChunks(store.db, { datasetId: 1, query, topK: 5 });

    expect(Array.isArray(hits)).toBe(true);
    expect(countChunks(store.db, 1)).toBe(33);
  });

  it('finds a dataset’s weaker matches when other datasets fill the best-ranked window', () => {
    replaceChunks(store.db, { datasetId: 3, sourceId: 30, chunks: Array.from({ length: 200 }, (_, i) => `alpha alpha alpha ${i}`) });
    replaceChunks(store.db, {
      datasetId: 4,
      sourceId: 40,
      chunks: ['alpha and a long tail of other words that dilute the match a great deal'],
    });

    const hits = searchChunks(store.db, { datasetId: 4, query: 'alpha', topK: 5 });

    expect(hits.map((h) => h.knowledgeSourceId)).toEqual([40]);
    expect(searchChunks(store.db, { datasetId: 3, query: 'alpha', topK: 20 })).toHaveLength(20);
  });

  it('finds the refund chunks for a query full of FTS syntax', () => {
    expect(searchChunks(store.db, { datasetId: 1, query: '"refund*" NEAR -policy:', topK: 5 })[0]?.chunkIndex).toBe(0);
  });

  it.each(['', '   ', 'the of and', '?!', 'What is it?'])('returns [] for %j', (query) => {
    expect(searchChunks(store.db, { datasetId: 1, query, topK: 5 })).toEqual([]);
  });
});
