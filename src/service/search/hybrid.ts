import type { Database } from 'better-sqlite3';
import { lexicalMatches, type ChunkHit } from '../store/chunks.js';
import { queryTerms } from './query-terms.js';
import { nearest, type VectorTable } from './vector-index.js';

/** Reciprocal rank fusion's constant: a hit at rank r (1-based) of a list adds 1 / (RRF_K + r). */
export const RRF_K = 60;
/** Chunks taken from each list before fusing, at least. */
const MIN_CANDIDATES = 50;
/**
 * A chunk whose vector is less similar than this to the query's is not a vector candidate: unrelated
 * texts of a few hundred words have hashed-vector cosines of about ±0.1.
 */
export const MIN_VECTOR_COSINE = 0.15;

export type HybridQuery = {
  datasetId: number;
  query: string;
  topK: number;
  scoreThreshold?: number;
  /** The dataset's vectors (search/vectors.ts ensureVectors) and the query's vector of the same model; without them, BM25 alone. */
  vectors?: { table: VectorTable; query: Float32Array };
};

type Candidate = { id: number; fused: number; lexicalRank?: number };

/**
 * Hybrid ranking: the dataset's best chunks by FTS5 BM25 and by vector cosine, fused by reciprocal
 * rank (each list gives 1 / (RRF_K + rank)), best first, at most `topK`, ties by insertion order.
 * The score is the fused value divided by its maximum (first in both lists), so it lies in [0, 1]:
 * 1 for a chunk first in both lists, about 0.5 for one first in one list and absent from the other.
 * A query with no searchable term (empty, punctuation, only stopwords) finds nothing.
 */
export function searchHybrid(db: Database, q: HybridQuery): ChunkHit[] {
  const topK = Math.max(1, Math.floor(q.topK));
  if (!Number.isFinite(topK) || queryTerms(q.query).length === 0) return [];
  const depth = Math.max(MIN_CANDIDATES, topK * 4);
  const lexical = lexicalMatches(db, q.datasetId, q.query, depth);
  const byVector = q.vectors === undefined ? [] : nearest(q.vectors.table, q.vectors.query, depth, MIN_VECTOR_COSINE);

  const candidates = new Map<number, Candidate>();
  const add = (id: number, rank: number): Candidate => {
    const c = candidates.get(id) ?? { id, fused: 0 };
    c.fused += 1 / (RRF_K + rank);
    candidates.set(id, c);
    return c;
  };
  lexical.forEach((m, i) => {
    add(m.id, i + 1).lexicalRank = i;
  });
  byVector.forEach((h, i) => add(h.id, i + 1));

  const max = 2 / (RRF_K + 1);
  const threshold = q.scoreThreshold ?? 0;
  const ranked = [...candidates.values()]
    .map((c) => ({ ...c, score: Math.min(1, c.fused / max) }))
    .filter((c) => c.score >= threshold)
    .sort((a, b) => b.fused - a.fused || a.id - b.id)
    .slice(0, topK);

  const vectorOnly = ranked.filter((c) => c.lexicalRank === undefined).map((c) => c.id);
  const rows = new Map(lexical.map((m) => [m.id, m]));
  if (vectorOnly.length > 0) {
    // Live only: the vector table may be older than a file replaced since.
    const stmt = db.prepare(
      `SELECT c.id AS id, c.text AS text, c.source_id AS sourceId, c.chunk_index AS chunkIndex
       FROM chunks c JOIN chunk_generations g ON g.id = c.generation WHERE c.id = ? AND g.state = 'live'`,
    );
    for (const id of vectorOnly) {
      const r = stmt.get(id) as { id: number; text: string; sourceId: number; chunkIndex: number } | undefined;
      if (r !== undefined) rows.set(id, { ...r, bm25: 0 });
    }
  }
  return ranked.flatMap((c) => {
    const r = rows.get(c.id);
    return r === undefined ? [] : [{ text: r.text, score: c.score, knowledgeSourceId: r.sourceId, chunkIndex: r.chunkIndex }];
  });
}
