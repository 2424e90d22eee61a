import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { migrateChunks, replaceChunks } from '../store/chunks.js';
import { hashedEmbedder } from './embedder.js';
import { prepareVectors } from './retrieve.js';
import { termWeights } from './term-weights.js';
import { cosines } from './vector-index.js';

let db: Database;

beforeEach(() => {
  db = new Sqlite(':memory:');
  migrateChunks(db);
  // "report" is in every chunk, "invoice" in one.
  const chunks = Array.from({ length: 40 }, (_, i) => `Monthly report number ${i} on the garden.`);
  replaceChunks(db, { datasetId: 1, sourceId: 1, chunks });
  replaceChunks(db, { datasetId: 1, sourceId: 2, chunks: ['The invoice lists every order.'] });
});

afterEach(() => {
  db.close();
});

describe('termWeights', () => {
  it('weighs a rare word above a common one, counting word forms through the stemmer', () => {
    const w = termWeights(db, ['report', 'invoices', 'absent']);

    expect(w.get('invoices')).toBeGreaterThan(3 * (w.get('report') ?? NaN));
    expect(w.get('absent')).toBeGreaterThan(w.get('invoices') ?? NaN);
    expect(w.get('report')).toBeGreaterThan(0);
  });

  it('counts again once the chunks change: a word that became common weighs less', () => {
    const before = termWeights(db, ['invoice']).get('invoice') ?? NaN;
    expect(termWeights(db, ['invoice']).get('invoice')).toBe(before);

    replaceChunks(db, { datasetId: 1, sourceId: 3, chunks: Array.from({ length: 30 }, (_, i) => `Invoice ${i} is paid.`) });

    expect(termWeights(db, ['invoice']).get('invoice')).toBeLessThan(before / 2);
  });

  it("makes the query's built-in vector lean to the chunk with its rarer word", async () => {
    const v = await prepareVectors(db, 1, hashedEmbedder, 'report invoice');
    if (v === undefined) throw new Error('no vectors');
    const ids = (db.prepare('SELECT id, source_id AS s FROM chunks ORDER BY id').all() as { id: number; s: number }[]).filter(
      (r, i) => r.s === 2 || i === 0,
    );
    const [common, rare] = cosines(
      v.table,
      v.query,
      ids.map((r) => r.id),
    );

    // Unweighted, the chunk with the common word is the closer one.
    expect(rare?.cosine).toBeGreaterThan(2 * (common?.cosine ?? NaN));
  });
});
