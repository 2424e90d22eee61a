import type { Database } from 'better-sqlite3';
import { liveChunkVectors, vectorRevision } from '../store/chunk-vectors.js';

/**
 * The vectors of one dataset and model, in memory for brute-force search: one Int8Array of
 * `count × dims` components, a scale and a chunk id per row. Rebuilt from the store when the
 * store's revision moved (a file processed or deleted, vectors written); `missing` lists the ids
 * of searchable chunks that have no vector of this model yet.
 *
 * Brute force, because a scan of every row is fast enough at the sizes kbsync targets: 100k chunks ×
 * 256 byte-sized dimensions is 25.6M multiply-adds per query and as many bytes of memory (its time:
 * `npm run bench`, service query; docs/benchmarks.md).
 */
export type VectorTable = {
  revision: number;
  dims: number;
  ids: Float64Array;
  scales: Float32Array;
  vecs: Int8Array;
  missing: number[];
  /** Row of each chunk id, built on first use (`cosines`). */
  rowOf?: Map<number, number>;
};

const caches = new WeakMap<Database, Map<string, VectorTable>>();

/** The dataset's vectors of `model`, from the cache when the store has not changed since. */
export function vectorTable(db: Database, datasetId: number, model: string): VectorTable {
  let perDb = caches.get(db);
  if (perDb === undefined) caches.set(db, (perDb = new Map()));
  const key = `${datasetId}\u0000${model}`;
  const revision = vectorRevision(db);
  const cached = perDb.get(key);
  if (cached !== undefined && cached.revision === revision) return cached;
  const rows = liveChunkVectors(db, datasetId, model);
  const withVec = rows.filter((r) => r.vec !== null);
  const dims = withVec[0]?.vec?.length ?? 0;
  const table: VectorTable = {
    revision,
    dims,
    ids: new Float64Array(withVec.length),
    scales: new Float32Array(withVec.length),
    vecs: new Int8Array(withVec.length * dims),
    missing: rows.filter((r) => r.vec === null).map((r) => r.id),
  };
  let n = 0;
  for (const r of withVec) {
    const vec = r.vec as Buffer;
    if (vec.length !== dims) continue; // a provider that changed its dimensions: left to reindex
    table.ids[n] = r.id;
    table.scales[n] = r.scale;
    table.vecs.set(new Int8Array(vec.buffer, vec.byteOffset, vec.length), n * dims);
    n++;
  }
  if (n < withVec.length) {
    table.ids = table.ids.subarray(0, n);
    table.scales = table.scales.subarray(0, n);
    table.vecs = table.vecs.subarray(0, n * dims);
  }
  perDb.set(key, table);
  return table;
}

export type VectorHit = { id: number; cosine: number };

/** The cosine of unit vector `query` with each of `ids` that has a vector (others are left out). */
export function cosines(table: VectorTable, query: Float32Array, ids: readonly number[]): VectorHit[] {
  const { dims, vecs, scales } = table;
  if (dims === 0 || query.length !== dims) return [];
  if (table.rowOf === undefined) {
    const rowOf = new Map<number, number>();
    table.ids.forEach((id, row) => rowOf.set(id, row));
    table.rowOf = rowOf;
  }
  const out: VectorHit[] = [];
  for (const id of ids) {
    const row = table.rowOf.get(id);
    if (row !== undefined) out.push({ id, cosine: dotAt(query, vecs, row * dims, dims) * (scales[row] as number) });
  }
  return out;
}

/** Σ query[j] · vecs[off + j], four components a step (dims is a multiple of 4 for every model used here; the rest is summed after). */
function dotAt(query: Float32Array, vecs: Int8Array, off: number, dims: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let j = 0;
  for (; j + 3 < dims; j += 4) {
    a += (query[j] as number) * (vecs[off + j] as number);
    b += (query[j + 1] as number) * (vecs[off + j + 1] as number);
    c += (query[j + 2] as number) * (vecs[off + j + 2] as number);
    d += (query[j + 3] as number) * (vecs[off + j + 3] as number);
  }
  for (; j < dims; j++) a += (query[j] as number) * (vecs[off + j] as number);
  return a + b + c + d;
}

/** The `limit` rows most similar to unit vector `query` (cosine, best first; ties by chunk id), at least `minCosine`. */
export function nearest(table: VectorTable, query: Float32Array, limit: number, minCosine: number): VectorHit[] {
  const { dims, vecs, scales, ids } = table;
  if (dims === 0 || query.length !== dims || limit <= 0) return [];
  const count = ids.length;
  // A bounded list of the best so far, sorted descending; most rows fail the first comparison.
  const best: VectorHit[] = [];
  let floor = minCosine;
  for (let row = 0, off = 0; row < count; row++, off += dims) {
    const cosine = dotAt(query, vecs, off, dims) * (scales[row] as number);
    if (cosine < floor) continue;
    const hit = { id: ids[row] as number, cosine };
    let at = best.length;
    while (at > 0 && (best[at - 1] as VectorHit).cosine < cosine) at--;
    best.splice(at, 0, hit);
    if (best.length > limit) best.pop();
    if (best.length === limit) floor = Math.max(minCosine, (best[limit - 1] as VectorHit).cosine);
  }
  return best;
}
