import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { chunkTexts, deleteOtherModelVectors, liveChunkPage, writeChunkVectors } from '../store/chunk-vectors.js';
import type { Embedder } from './embedder.js';
import { HASHED_MODEL } from './hashed-vector.js';
import { vectorTable, type VectorTable } from './vector-index.js';

/**
 * Embeds `chunks` with `embedder` a batch at a time and stores their vectors, letting other
 * requests in between batches (the built-in embedder works synchronously: a batch holds the event
 * loop while it runs).
 */
async function embedAndStore(
  db: Database,
  datasetId: number,
  embedder: Embedder,
  chunks: readonly { id: number; text: string }[],
): Promise<void> {
  for (let i = 0; i < chunks.length; i += embedder.batchSize) {
    if (i > 0) await nextTurn();
    const batch = chunks.slice(i, i + embedder.batchSize);
    const vectors = await embedder.embed(batch.map((c) => c.text));
    writeChunkVectors(
      db,
      embedder.model,
      batch.map((c, k) => ({ chunkId: c.id, datasetId, vector: vectors[k] as Float32Array })),
    );
  }
}

const PAGE = 4096;

/** Most chunks a query embeds before it searches; the rest wait for later queries or a reindex. */
export const MAX_EMBEDDED_PER_QUERY = 256;

/**
 * The dataset's vector table for `embedder`, after embedding up to MAX_EMBEDDED_PER_QUERY of the
 * searchable chunks that have no vector of its model yet (new chunks when a provider is configured;
 * none with the built-in vectors, which are written with the chunks). So a query after new files
 * costs a few provider calls, never the whole dataset's: after a change of provider, chunks without
 * a vector are found by BM25 alone until a reindex (or enough queries) embeds them.
 */
export async function ensureVectors(db: Database, datasetId: number, embedder: Embedder): Promise<VectorTable> {
  const table = vectorTable(db, datasetId, embedder.model);
  if (table.missing.length === 0) return table;
  await embedAndStore(db, datasetId, embedder, chunkTexts(db, table.missing.slice(0, MAX_EMBEDDED_PER_QUERY)));
  return vectorTable(db, datasetId, embedder.model);
}

/**
 * Rebuilds every vector of the dataset with `embedder` (a page of chunks at a time, so memory stays
 * bounded), then deletes the vectors of any other model. Returns how many chunks were embedded:
 * with the built-in vectors, only those missing (see below).
 * A failure leaves the old vectors in place (and some new ones, which the next query or reindex reuses or replaces).
 */
export async function rebuildVectors(db: Database, datasetId: number, embedder: Embedder): Promise<number> {
  if (embedder.model === HASHED_MODEL) {
    // Built-in vectors depend on nothing but the text and were written with it: only the missing ones
    // (dropped by an earlier provider's reindex) are made again.
    const missing = vectorTable(db, datasetId, HASHED_MODEL).missing;
    for (let i = 0; i < missing.length; i += PAGE) await embedAndStore(db, datasetId, embedder, chunkTexts(db, missing.slice(i, i + PAGE)));
    deleteOtherModelVectors(db, datasetId, embedder.model);
    return missing.length;
  }
  let count = 0;
  for (let after = 0; ;) {
    const page = liveChunkPage(db, datasetId, after, PAGE);
    if (page.length === 0) break;
    await embedAndStore(db, datasetId, embedder, page);
    count += page.length;
    after = (page[page.length - 1] as { id: number }).id;
  }
  deleteOtherModelVectors(db, datasetId, embedder.model);
  return count;
}
