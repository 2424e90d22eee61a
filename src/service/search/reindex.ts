import type { Database } from 'better-sqlite3';
import { reindexChunks } from '../store/chunks.js';

/**
 * Rebuilds the dataset's full-text index from its stored chunks (what the API calls "reindex
 * embeddings": this service's index is FTS5 BM25) in one transaction; returns the searchable chunk count.
 */
export function reindexDataset(db: Database, datasetId: number): { chunks: number } {
  return { chunks: reindexChunks(db, datasetId) };
}
