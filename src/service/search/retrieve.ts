import type { Database } from 'better-sqlite3';
import type { ChunkHit } from '../store/chunks.js';
import type { Embedder } from './embedder.js';
import { HASHED_MODEL, hashedVector } from './hashed-vector.js';
import { termWeights } from './term-weights.js';
import { searchHybrid, type HybridQuery } from './hybrid.js';
import { queryTerms } from './query-terms.js';
import { ensureVectors } from './vectors.js';

/**
 * What a hybrid search needs beyond the database: the dataset's vectors for `embedder` (embedding
 * chunks that lack one first) and the query's vector (for the built-in vectors, its words weighted by
 * their IDF in the index). Undefined for a query with no searchable term.
 */
export async function prepareVectors(db: Database, datasetId: number, embedder: Embedder, query: string): Promise<HybridQuery['vectors']> {
  if (queryTerms(query).length === 0) return undefined;
  const table = await ensureVectors(db, datasetId, embedder);
  let vector: Float32Array | undefined;
  if (embedder.model === HASHED_MODEL) {
    // The built-in vectors have no document-side IDF: the query's words carry it instead.
    const weights = termWeights(db, queryTerms(query));
    vector = hashedVector(query, (word) => weights.get(word) ?? 1);
  } else [vector] = await embedder.embed([query]);
  return vector === undefined ? undefined : { table, query: vector, lexicalFirst: embedder.model === HASHED_MODEL };
}

/** The dataset's best chunks for `query` by hybrid ranking (search/hybrid.ts), used by query and chat alike. */
export async function retrieve(
  db: Database,
  embedder: Embedder,
  q: { datasetId: number; query: string; topK: number; scoreThreshold?: number },
): Promise<ChunkHit[]> {
  const vectors = await prepareVectors(db, q.datasetId, embedder, q.query);
  return searchHybrid(db, { ...q, ...(vectors === undefined ? {} : { vectors }) });
}
