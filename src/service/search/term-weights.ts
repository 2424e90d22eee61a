import type { Database } from 'better-sqlite3';
import { vectorRevision } from '../store/chunk-vectors.js';

const caches = new WeakMap<Database, { revision: number; chunks: number; idf: Map<string, number> }>();

/**
 * A word's inverse document frequency in the full-text index, as BM25 weighs it:
 * ln(1 + (N − df + 0.5) / (df + 0.5)), N the indexed chunks, df those holding the word (after the
 * index's own stemming). Cached until the chunks change. Scales a query's words in its hashed vector
 * so "request" in a corpus about HTTP requests counts less than "proxy".
 */
export function termWeights(db: Database): (word: string) => number {
  const revision = vectorRevision(db);
  let cache = caches.get(db);
  if (cache === undefined || cache.revision !== revision) {
    const { n } = db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number };
    cache = { revision, chunks: n, idf: new Map() };
    caches.set(db, cache);
  }
  const c = cache;
  const count = db.prepare('SELECT COUNT(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?');
  return (word) => {
    let idf = c.idf.get(word);
    if (idf === undefined) {
      // The word is letters and digits only (the tokenizer's own runs), so quoting it is a plain term.
      const df = (count.get(`"${word}"`) as { n: number }).n;
      idf = Math.log(1 + (c.chunks - df + 0.5) / (df + 0.5));
      c.idf.set(word, idf);
    }
    return idf;
  };
}
