import type { Database } from 'better-sqlite3';
import { writeTransaction } from './write-transaction.js';

/**
 * One vector per chunk and embedding model, stored quantised: each component as a signed byte
 * (`vec`, the vector scaled so its largest component is ±127) and the factor back (`scale`), so
 * 256 dimensions take 256 bytes and the cosine of two unit vectors is `dot(a, b) · scale_a · scale_b`.
 * Rows of a chunk go when the chunk is deleted (trigger). A self-contained schema, migrated with the
 * chunks (`migrateChunkVectors`), so a merge of other migrations need not renumber it.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS chunk_vectors (
  model TEXT NOT NULL,
  chunk_id INTEGER NOT NULL,
  dataset_id INTEGER NOT NULL,
  scale REAL NOT NULL,
  vec BLOB NOT NULL,
  PRIMARY KEY (model, chunk_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunk_vectors_chunk ON chunk_vectors(chunk_id);
CREATE INDEX IF NOT EXISTS chunk_vectors_dataset ON chunk_vectors(dataset_id, model);
CREATE TRIGGER IF NOT EXISTS chunks_vectors_delete AFTER DELETE ON chunks BEGIN
  DELETE FROM chunk_vectors WHERE chunk_id = old.id;
END;
`;

/** Creates the vector table and its trigger if missing (idempotent); runs after the chunk schema. */
export function migrateChunkVectors(db: Database): void {
  db.exec(SCHEMA);
}

export type QuantizedVector = { scale: number; vec: Int8Array };

/** A float vector as signed bytes and the factor back; the bytes go to `into` (as long as `vector`, overwritten) when given. */
export function quantize(vector: Float32Array, into?: Int8Array): QuantizedVector {
  let max = 0;
  for (const v of vector) max = Math.max(max, Math.abs(v));
  if (into !== undefined && into.length !== vector.length) throw new RangeError('quantize: into must be as long as the vector');
  const vec = into?.fill(0) ?? new Int8Array(vector.length);
  if (max === 0) return { scale: 0, vec };
  const k = 127 / max;
  for (let i = 0; i < vector.length; i++) vec[i] = Math.round((vector[i] as number) * k);
  return { scale: max / 127, vec };
}

const revisions = new WeakMap<Database, number>();

/** A number that changes whenever the searchable chunks or their vectors may have changed (caches compare it). */
export function vectorRevision(db: Database): number {
  return revisions.get(db) ?? 0;
}

/** Marks the searchable chunks or their vectors as changed. */
export function bumpVectorRevision(db: Database): void {
  revisions.set(db, vectorRevision(db) + 1);
}

/** Writes (or replaces) vectors of chunks for `model`, in the caller's transaction or its own. */
export function writeChunkVectors(
  db: Database,
  model: string,
  rows: readonly { chunkId: number; datasetId: number; vector: Float32Array }[],
): void {
  const insert = db.prepare('INSERT OR REPLACE INTO chunk_vectors (model, chunk_id, dataset_id, scale, vec) VALUES (?, ?, ?, ?, ?)');
  writeTransaction(db, () => {
    for (const r of rows) {
      const q = quantize(r.vector);
      insert.run(model, r.chunkId, r.datasetId, q.scale, Buffer.from(q.vec.buffer, q.vec.byteOffset, q.vec.byteLength));
    }
  })();
  bumpVectorRevision(db);
}

/** Deletes the dataset's vectors of every model but `keepModel`; returns how many. */
export function deleteOtherModelVectors(db: Database, datasetId: number, keepModel: string): number {
  const n = db.prepare('DELETE FROM chunk_vectors WHERE dataset_id = ? AND model <> ?').run(datasetId, keepModel).changes;
  bumpVectorRevision(db);
  return n;
}

/** The texts of chunks by id (those that still exist). */
export function chunkTexts(db: Database, ids: readonly number[]): { id: number; text: string }[] {
  const stmt = db.prepare('SELECT id, text FROM chunks WHERE id = ?');
  return ids.flatMap((id) => {
    const row = stmt.get(id) as { id: number; text: string } | undefined;
    return row === undefined ? [] : [row];
  });
}

/** The dataset's searchable chunks (id and text), in id order, after `afterId`, at most `limit`. */
export function liveChunkPage(db: Database, datasetId: number, afterId: number, limit: number): { id: number; text: string }[] {
  return db
    .prepare(
      `SELECT c.id AS id, c.text AS text FROM chunk_generations g JOIN chunks c ON c.generation = g.id
       WHERE g.dataset_id = ? AND g.state = 'live' AND c.id > ? ORDER BY c.id LIMIT ?`,
    )
    .all(datasetId, afterId, limit) as { id: number; text: string }[];
}

export type VectorRow = { id: number; scale: number; vec: Buffer | null };

/** Every searchable chunk of the dataset with its `model` vector, or `vec` null when it has none yet. */
export function liveChunkVectors(db: Database, datasetId: number, model: string): VectorRow[] {
  return db
    .prepare(
      `SELECT c.id AS id, v.scale AS scale, v.vec AS vec
       FROM chunk_generations g JOIN chunks c ON c.generation = g.id
       LEFT JOIN chunk_vectors v ON v.model = ? AND v.chunk_id = c.id
       WHERE g.dataset_id = ? AND g.state = 'live' ORDER BY c.id`,
    )
    .all(model, datasetId) as VectorRow[];
}
