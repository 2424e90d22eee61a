import type { Database, Statement } from 'better-sqlite3';
import { vectorRevision } from '../store/chunk-vectors.js';

/** Document frequencies are counted up to this many chunks: a word in more is common whatever its exact count. */
const DF_CAP = 2000;
/** Most words whose document frequency is kept between queries (the cache is emptied when it is full). */
const MAX_CACHED_WORDS = 10_000;

/** Per database: the chunk count and the words' document frequencies, valid while the chunks do not change. */
type Stats = { revision: number; n: number; df: Map<string, number> };
const stats = new WeakMap<Database, Stats>();

/** The database's statistics for the current chunks: kept until any chunk is written or retired. */
function statsOf(db: Database): Stats {
  const revision = vectorRevision(db);
  const cached = stats.get(db);
  if (cached !== undefined && cached.revision === revision) return cached;
  // Every dataset's chunks: FTS5 ranks over the whole index.
  const { n } = db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number };
  const fresh: Stats = { revision, n, df: new Map() };
  stats.set(db, fresh);
  return fresh;
}

/**
 * Inverse document frequency of each query word in the full-text index, for weighting the query's
 * built-in vector (a rare word decides more than a common one, as in BM25): BM25's own form,
 * `ln(1 + (N − df + 0.5) / (df + 0.5))`, with df counted through FTS5 (so the porter stemmer applies)
 * and capped at DF_CAP, which bounds each count's cost on a large index. Counts are kept until the
 * chunks change, so a word already asked about costs no count.
 */
export function termWeights(db: Database, words: readonly string[]): Map<string, number> {
  const s = statsOf(db);
  let count: Statement<[string, number], { df: number }> | undefined;
  const out = new Map<string, number>();
  for (const w of words) {
    let df = s.df.get(w);
    if (df === undefined) {
      count ??= db.prepare<[string, number], { df: number }>(
        'SELECT COUNT(*) AS df FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)',
      );
      df = (count.get(`"${w}"`, DF_CAP) as { df: number }).df;
      if (s.df.size >= MAX_CACHED_WORDS) s.df.clear();
      s.df.set(w, df);
    }
    out.set(w, Math.log(1 + (Math.max(s.n, df) - df + 0.5) / (df + 0.5)));
  }
  return out;
}
