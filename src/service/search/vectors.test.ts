import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { collectChunkGarbage, migrateChunks, replaceChunks } from '../store/chunks.js';
import { hashedEmbedder, type Embedder } from './embedder.js';
import { quantize } from '../store/chunk-vectors.js';
import { HASHED_MODEL, hashedVector } from './hashed-vector.js';
import { nearest, vectorTable } from './vector-index.js';
import { ensureVectors, MAX_EMBEDDED_PER_QUERY, rebuildVectors } from './vectors.js';

let db: Database;
const calls: string[][] = [];
const fake: Embedder = {
  model: 'fake-2d',
  batchSize: 2,
  embed: async (texts) => {
    calls.push([...texts]);
    return texts.map((t) => Float32Array.from(t.includes('lamp') ? [0.6, 0.8] : [1, 0]));
  },
};

const models = (): { model: string; n: number }[] =>
  db.prepare('SELECT model, COUNT(*) AS n FROM chunk_vectors GROUP BY model ORDER BY model').all() as { model: string; n: number }[];

beforeEach(() => {
  db = new Sqlite(':memory:');
  migrateChunks(db);
  calls.length = 0;
  replaceChunks(db, { datasetId: 1, sourceId: 1, chunks: ['lighthouse keeper', 'harbour master', 'lighthouse lamp'] });
});

afterEach(() => {
  db.close();
});

describe('chunk vectors', () => {
  it('every written chunk gets a built-in vector, and a retired chunk loses it when collected', () => {
    replaceChunks(db, { datasetId: 1, sourceId: 1, chunks: ['lighthouse stairs'] });

    expect(models()).toEqual([{ model: HASHED_MODEL, n: 4 }]);
    collectChunkGarbage(db, 100);
    expect(models()).toEqual([{ model: HASHED_MODEL, n: 1 }]);
  });

  it("each chunk's stored built-in vector is its own text's, though one array is reused for them all", () => {
    const texts = ['lighthouse stairs', 'harbour crane', '', 'copper kettle on the stove'];
    replaceChunks(db, { datasetId: 1, sourceId: 2, chunks: texts });

    const rows = db
      .prepare(
        `SELECT c.text AS text, v.scale AS scale, v.vec AS vec FROM chunks c JOIN chunk_vectors v ON v.chunk_id = c.id
         WHERE c.source_id = 2 ORDER BY c.chunk_index`,
      )
      .all() as { text: string; scale: number; vec: Buffer }[];

    expect(rows.map((r) => r.text)).toEqual(texts);
    for (const r of rows) {
      const q = quantize(hashedVector(r.text));
      expect(r.scale).toBeCloseTo(q.scale, 9);
      expect([...new Int8Array(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength)]).toEqual([...q.vec]);
    }
  });

  it('quantize writes into a given array, overwriting it, the bytes of a new one', () => {
    const v = hashedVector('harbour crane');
    const into = new Int8Array(v.length).fill(5);

    const q = quantize(v, into);

    expect(q.vec).toBe(into);
    expect([...q.vec]).toEqual([...quantize(v).vec]);
    expect([...quantize(new Float32Array(v.length), into).vec].every((x) => x === 0)).toBe(true);
    expect(() => quantize(v, new Int8Array(2))).toThrow(RangeError);
  });

  it('ensureVectors embeds at most MAX_EMBEDDED_PER_QUERY chunks a call', async () => {
    replaceChunks(db, { datasetId: 1, sourceId: 3, chunks: Array.from({ length: MAX_EMBEDDED_PER_QUERY + 10 }, (_, i) => `note ${i}`) });

    const first = await ensureVectors(db, 1, fake);
    const second = await ensureVectors(db, 1, fake);

    expect(first.ids).toHaveLength(MAX_EMBEDDED_PER_QUERY);
    expect(first.missing).toHaveLength(13);
    expect(second.ids).toHaveLength(MAX_EMBEDDED_PER_QUERY + 13);
    expect(second.missing).toEqual([]);
  });

  it('ensureVectors embeds only the chunks that lack a vector of the model, in batches', async () => {
    const first = await ensureVectors(db, 1, fake);
    replaceChunks(db, { datasetId: 1, sourceId: 2, chunks: ['desk lamp'] });
    const second = await ensureVectors(db, 1, fake);

    expect(calls).toEqual([['lighthouse keeper', 'harbour master'], ['lighthouse lamp'], ['desk lamp']]);
    expect(first.ids).toHaveLength(3);
    expect(second.ids).toHaveLength(4);
    expect(second.missing).toEqual([]);
  });

  it('rebuildVectors re-embeds every chunk and drops the other models', async () => {
    await ensureVectors(db, 1, fake);
    calls.length = 0;

    const count = await rebuildVectors(db, 1, fake);

    expect(count).toBe(3);
    expect(calls.flat()).toHaveLength(3);
    expect(models()).toEqual([{ model: 'fake-2d', n: 3 }]);
  });

  it('rebuildVectors with the built-in vectors makes only the missing ones again', async () => {
    await rebuildVectors(db, 1, fake);
    expect(models()).toEqual([{ model: 'fake-2d', n: 3 }]);

    const count = await rebuildVectors(db, 1, hashedEmbedder);

    expect(count).toBe(3);
    expect(models()).toEqual([{ model: HASHED_MODEL, n: 3 }]);
    expect(await rebuildVectors(db, 1, hashedEmbedder)).toBe(0);
  });

  it('nearest returns the most similar first, within the limit and above the floor', async () => {
    await ensureVectors(db, 1, fake);
    const table = vectorTable(db, 1, 'fake-2d');

    const hits = nearest(table, Float32Array.from([0.6, 0.8]), 2, 0.5);

    expect(hits).toHaveLength(2);
    expect(hits[0]?.cosine).toBeCloseTo(1, 2);
    expect(hits[1]?.cosine).toBeCloseTo(0.6, 2);
    expect(nearest(table, Float32Array.from([0, 1]), 5, 0.7).map((h) => h.cosine)).toEqual([expect.closeTo(0.8, 2)]);
  });
});
