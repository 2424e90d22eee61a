import type { Database } from 'better-sqlite3';
import { lexicalMatches, type ChunkHit, type HitOrigin } from '../store/chunks.js';
import { queryTerms } from './query-terms.js';
import { rankWithFileEvidence } from './file-evidence.js';
import { scoreFromBm25 } from './score.js';
import { cosines, nearest, type VectorTable } from './vector-index.js';

/**
 * The vector similarity's share of the score (BM25's is the rest). The built-in hashed vectors are
 * bag-of-words like BM25 but noisier (hash collisions, no document-side IDF; the query's words are
 * weighted by IDF, search/term-weights.ts): on the project's evaluation they alone rank worse than
 * BM25, and a larger share, or reciprocal rank fusion (which flattens
 * BM25's confident margins into rank votes), ranked worse than BM25 alone (docs/service.md:
 * Evaluation). So they break ties and lift near misses rather than outvote BM25. With file
 * evidence, shares of 0 to 0.25 moved the two evaluation sets in opposite directions (within one
 * question's worth), so 0.15 stays.
 */
export const VECTOR_WEIGHT = 0.15;
/**
 * Chunks taken from each list before fusing, at least (4 × topK above 25). 100 rather than 50: file
 * evidence (search/file-evidence.ts) draws on a file's other candidates, and on the evaluation's
 * second set 50 lost recall@5; with a depth that does not move below top_k 25, a
 * query's first results are the same whatever top_k it asks for.
 */
const MIN_CANDIDATES = 100;
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
  /**
   * The dataset's vectors (search/vectors.ts ensureVectors) and the query's vector of the same
   * model; without them, BM25 alone. `lexicalFirst`: when BM25 already found a full list of
   * candidates, score those by vector instead of scanning every vector (see searchHybrid).
   */
  vectors?: { table: VectorTable; query: Float32Array; lexicalFirst?: boolean };
};

type Candidate = { id: number; bm25?: number; cosine: number };

/** How many chunks a source's live generation holds (file evidence weighs a large file's matches less), looked up once per source. */
function liveChunkCounts(db: Database): (sourceId: number) => number {
  const stmt = db
    .prepare(
      `SELECT MAX(c.chunk_index) + 1 FROM chunks c
       WHERE c.generation = (SELECT id FROM chunk_generations WHERE source_id = ? AND state = 'live')`,
    )
    .pluck();
  const counts = new Map<number, number>();
  return (sourceId) => {
    let n = counts.get(sourceId);
    if (n === undefined) {
      n = (stmt.get(sourceId) as number | null) ?? 1;
      counts.set(sourceId, n);
    }
    return n;
  };
}

/**
 * Hybrid ranking: the dataset's best chunks by FTS5 BM25 (text, heading path and file name, each
 * column weighted: search/fields.ts) and by vector cosine, each scored
 * `(1 − VECTOR_WEIGHT) · scoreFromBm25(bm25) + VECTOR_WEIGHT · max(0, cosine)` (a chunk missing
 * from one list scores 0 there), then re-scored with its file's evidence (search/file-evidence.ts:
 * lifted by the file's other candidates, damped for each chunk of its file ranked above it), best
 * first, at most `topK`, ties by insertion order. Every step keeps the score in [0, 1]. It is a
 * score, not a rank (as reciprocal rank fusion would give): a chunk that matches the query poorly
 * scores low even when it is the best there is, which keeps `score_threshold` meaningful (it is
 * applied to the final score). A query with no searchable term (empty, punctuation, only
 * stopwords) finds nothing.
 *
 * Vector candidates come from a brute-force scan of the dataset's vectors, except with
 * `lexicalFirst` (the built-in hashed vectors) when BM25 found `depth` candidates or more: then only
 * those are scored by vector. Hashed vectors are bag-of-words, so a chunk that shares no word with
 * the query is unlikely to reach the top; the scan (a multiply-add per dimension of every chunk) is kept for
 * queries BM25 barely matches, and always for a provider's vectors, whose point is finding what no word matches.
 */
export function searchHybrid(db: Database, q: HybridQuery): ChunkHit[] {
  const topK = Math.max(1, Math.floor(q.topK));
  if (!Number.isFinite(topK) || queryTerms(q.query).length === 0) return [];
  const depth = Math.max(MIN_CANDIDATES, topK * 4);
  const lexical = lexicalMatches(db, q.datasetId, q.query, depth);
  const v = q.vectors;
  const scan = v !== undefined && !(v.lexicalFirst === true && lexical.length >= depth);
  const byVector =
    v === undefined
      ? []
      : scan
        ? nearest(v.table, v.query, depth, MIN_VECTOR_COSINE)
        : cosines(
            v.table,
            v.query,
            lexical.map((m) => m.id),
          );

  const candidates = new Map<number, Candidate>();
  for (const m of lexical) candidates.set(m.id, { id: m.id, bm25: m.bm25, cosine: 0 });
  for (const h of byVector) {
    const c = candidates.get(h.id);
    if (c === undefined) candidates.set(h.id, { id: h.id, cosine: h.cosine });
    else c.cosine = h.cosine;
  }
  type HitRow = { text: string; sourceId: number; chunkIndex: number; origin: HitOrigin };
  const rows = new Map<number, HitRow>(lexical.map((m) => [m.id, m]));
  const vectorOnly = [...candidates.values()].filter((c) => c.bm25 === undefined).map((c) => c.id);
  if (vectorOnly.length > 0) {
    // Live only: the vector table may be older than a file replaced since.
    const stmt = db.prepare(
      `SELECT c.text AS text, c.source_id AS sourceId, c.chunk_index AS chunkIndex, c.heading AS heading, c.first_row AS firstRow,
              c.last_row AS lastRow
       FROM chunks c JOIN chunk_generations g ON g.id = c.generation WHERE c.id = ? AND g.state = 'live'`,
    );
    for (const id of vectorOnly) {
      const r = stmt.get(id) as (Omit<HitRow, 'origin'> & HitOrigin) | undefined;
      if (r !== undefined) rows.set(id, { ...r, origin: { heading: r.heading, firstRow: r.firstRow, lastRow: r.lastRow } });
    }
  }
  const fused = [...candidates.values()].flatMap((c) => {
    const r = rows.get(c.id);
    if (r === undefined) return [];
    const lexicalScore = c.bm25 === undefined ? 0 : scoreFromBm25(c.bm25);
    return [
      {
        id: c.id,
        sourceId: r.sourceId,
        row: r,
        score: Math.min(1, (1 - VECTOR_WEIGHT) * lexicalScore + VECTOR_WEIGHT * Math.max(0, c.cosine)),
      },
    ];
  });
  const threshold = q.scoreThreshold ?? 0;
  return rankWithFileEvidence(fused, topK, liveChunkCounts(db))
    .filter((c) => c.score >= threshold)
    .map((c) => ({ text: c.row.text, score: c.score, knowledgeSourceId: c.sourceId, chunkIndex: c.row.chunkIndex, origin: c.row.origin }));
}
