import type { Database } from 'better-sqlite3';
import { reindexChunks } from '../store/chunks.js';
import type { Embedder } from './embedder.js';
import { rebuildVectors } from './vectors.js';

/**
 * Rebuilds every vector of the dataset with `embedder` (the configured provider, or the built-in
 * hashed vectors), dropping vectors of any other model, so a change of provider takes effect for
 * every chunk. Run before the paid commit: a provider failure throws `embeddings_failed` and costs
 * nothing.
 */
export async function rebuildDatasetVectors(db: Database, datasetId: number, embedder: Embedder): Promise<number> {
  return rebuildVectors(db, datasetId, embedder);
}

/**
 * Rebuilds the dataset's full-text index from its stored chunks in one transaction; returns the
 * searchable chunk count.
 */
export function reindexDataset(db: Database, datasetId: number): { chunks: number } {
  return { chunks: reindexChunks(db, datasetId) };
}
