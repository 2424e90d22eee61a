import type { Database } from 'better-sqlite3';
import { vectorRevision } from '../store/chunk-vectors.js';

/** Document frequencies are counted up to this many chunks: a word in more is common whatever its exact count. */
const DF_CAP = 2000;

const chunkCounts = new WeakMap<Database, { revision: number; n: number }>();

/** Chunks in the full-text index (every dataset's, as FTS5 ranks over them all), cached until the chunks change. */
function indexedChunks(db: Database): number {
  const revision = vectorRevision(db);
  const cached = chunkCounts.get(db);
  if (cached !== undefined && cached.revision === revision) return cached.n;
  const { n } = db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number };
  chunkCounts.set(db, { revision, n });
  return n;
}

/**
 * Inverse document frequency of each query word in the full-text index, for weighting the query's
 * built-in vector (a rare word decides more than a common one, as in BM25): BM25's own form,
 * `ln(1 + (N − df + 0.5) / (df + 0.5))`, with df counted through FTS5 (so the porter stemmer applies)
 * and capped at DF_CAP, which bounds each count's cost on a large index.
 */
export function termWeights(db: Database, words: readonly string[]): Map<string, number> {
  const n = indexedChunks(db);
  const count = db.prepare('SELECT COUNT(*) AS df FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)');
  const out = new Map<string, number>();
  for (const w of words) {
    const { df } = count.get(`"${w}"`, DF_CAP) as { df: number };
    out.set(w, Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5)));
  }
  return out;
}
