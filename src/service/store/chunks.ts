import type { Database } from 'better-sqlite3';
import { toFtsQuery } from '../search/query-terms.js';
import { scoreFromBm25 } from '../search/score.js';
import { FIELD_BM25 } from '../search/fields.js';
import { HASHED_DIMS, HASHED_MODEL, hashedVector } from '../search/hashed-vector.js';
import { bumpVectorRevision, migrateChunkVectors, quantize, type QuantizedVector } from './chunk-vectors.js';
import { deadOwners, ownerOf } from './owners.js';
import { writeTransaction } from './write-transaction.js';

/**
 * Chunks of every knowledge source (file or intelligence entry) and their FTS5 index.
 *
 * `chunks_fts` is an external-content FTS5 table over `chunks` (the text is stored once); triggers
 * keep the index in step with every insert, update and delete of a chunk row, in the same
 * transaction. (External content rather than contentless_delete: its deletes are several times
 * faster, so a batch of garbage deletes does not block the service.)
 *
 * Each write of a source's chunks is a *generation*. A new generation is written while `staging`
 * (invisible to search), in batches, then made `live` in one O(1) transaction that retires the old
 * one to `garbage`; garbage rows are deleted later, a batch at a time (`collectChunkGarbage`). So a
 * large file never holds a long write transaction, the old chunks stay searchable until the new ones
 * are complete, and a query never sees half a file.
 *
 * Staging batches and garbage deletes are written with `synchronous = NORMAL` (see `relaxedSync`):
 * losing them to a power cut loses nothing (a staging generation left by a crash becomes garbage and
 * its file is processed again), and a sync to disk on each of a large file's many batches cost more
 * than the writes themselves and stalled the event loop. The commit that makes a generation live keeps the connection's own setting.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS chunk_generations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  dataset_id INTEGER NOT NULL,
  source_id INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('staging', 'live', 'garbage'))
);
CREATE UNIQUE INDEX IF NOT EXISTS chunk_generations_live ON chunk_generations(source_id) WHERE state = 'live';
CREATE INDEX IF NOT EXISTS chunk_generations_state ON chunk_generations(state, source_id);
CREATE TABLE IF NOT EXISTS chunks (
  id INTEGER PRIMARY KEY,
  dataset_id INTEGER NOT NULL,
  source_id INTEGER NOT NULL,
  chunk_index INTEGER NOT NULL,
  text TEXT NOT NULL,
  generation INTEGER NOT NULL,
  heading TEXT,
  first_row INTEGER,
  last_row INTEGER,
  title TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS chunks_generation ON chunks(generation, chunk_index);
CREATE INDEX IF NOT EXISTS chunks_dataset ON chunks(dataset_id);
`;

/**
 * The full-text index over each chunk's text, its section's heading path and its source's title (a
 * file's name), ranked with a weight per column (search/fields.ts). Kept apart from SCHEMA: an index
 * made before the heading and title columns is dropped and rebuilt (see `migrateChunks`).
 */
const FTS_SCHEMA = `
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
  text, heading, title, content = 'chunks', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_fts_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts (rowid, text, heading, title) VALUES (new.id, new.text, new.heading, new.title);
END;
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, text, heading, title) VALUES ('delete', old.id, old.text, old.heading, old.title);
END;
CREATE TRIGGER IF NOT EXISTS chunks_fts_update AFTER UPDATE OF text, heading, title ON chunks BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, text, heading, title) VALUES ('delete', old.id, old.text, old.heading, old.title);
  INSERT INTO chunks_fts (rowid, text, heading, title) VALUES (new.id, new.text, new.heading, new.title);
END;
`;

/** Where a found chunk came from (stored at ingest): its section's heading path or sheet, and the source rows it holds; null where none. */
export type HitOrigin = { heading: string | null; firstRow: number | null; lastRow: number | null };

export type ChunkHit = { text: string; score: number; knowledgeSourceId: number; chunkIndex: number; origin: HitOrigin };

/**
 * Where a chunk came from, kept beside its text: the heading path of its section (a sheet's name for a
 * spreadsheet), and the first and last source rows its records hold (CSV, TSV and JSONL rows, sheet rows,
 * Parquet rows); null where the format has none. A bare string is a chunk with no origin.
 */
/** A chunk to write; `vector`, its hashed vector quantized, when the ingest worker computed it already (else computed here). */
export type ChunkInput =
  string | { text: string; heading: string | null; firstRow: number | null; lastRow: number | null; vector?: QuantizedVector };

/**
 * The origin columns, added to a chunks table made before they existed (no data is rewritten: old
 * chunks have none until their file is processed again).
 */
const ORIGIN_COLUMNS = ['heading TEXT', 'first_row INTEGER', 'last_row INTEGER', 'title TEXT'] as const;

/**
 * Creates the full-text index, or replaces one made before it indexed headings and titles (a
 * single `text` column) and fills it again from the chunks: once, on the first start after an upgrade.
 */
function migrateChunksFts(db: Database): void {
  const columns = (db.prepare("SELECT name FROM pragma_table_info('chunks_fts')").all() as { name: string }[]).map((c) => c.name);
  const stale = columns.length > 0 && !columns.includes('title');
  if (stale) {
    for (const t of ['chunks_fts_insert', 'chunks_fts_delete', 'chunks_fts_update']) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
    db.exec('DROP TABLE chunks_fts');
  }
  db.exec(FTS_SCHEMA);
  if (stale) rebuildSearchIndex(db);
}

/**
 * Creates the chunk tables, index and triggers if missing (idempotent); a generation left staging by a
 * crash becomes garbage (one its owner, another service on the data folder, is still writing stays).
 */
export function migrateChunks(db: Database): void {
  db.exec(SCHEMA);
  const columnsOf = (table: string): Set<string> =>
    new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
  const have = columnsOf('chunks');
  for (const column of ORIGIN_COLUMNS) {
    if (!have.has(column.split(' ')[0] as string)) db.exec(`ALTER TABLE chunks ADD COLUMN ${column}`);
  }
  if (!columnsOf('chunk_generations').has('owner')) db.exec('ALTER TABLE chunk_generations ADD COLUMN owner TEXT');
  migrateChunksFts(db);
  migrateChunkVectors(db);
  const dead = deadOwners(db, 'chunk_generations', 'owner', `state = 'staging'`);
  db.prepare(
    `UPDATE chunk_generations SET state = 'garbage' WHERE state = 'staging' AND (owner IS NULL OR owner IN (SELECT value FROM json_each(?)))`,
  ).run(dead);
}

function newGeneration(db: Database, datasetId: number, sourceId: number): number {
  const row = db
    .prepare(`INSERT INTO chunk_generations (dataset_id, source_id, state, owner) VALUES (?, ?, 'staging', ?) RETURNING id`)
    .get(datasetId, sourceId, ownerOf(db)) as { id: number };
  return row.id;
}

function makeLive(db: Database, sourceId: number, generation: number): void {
  db.prepare(`UPDATE chunk_generations SET state = 'garbage' WHERE source_id = ? AND state = 'live'`).run(sourceId);
  db.prepare(`UPDATE chunk_generations SET state = 'live' WHERE id = ?`).run(generation);
  bumpVectorRevision(db);
}

/**
 * Inserts one chunk, with where it came from, and its built-in vector (HASHED_MODEL: cheap, so every
 * chunk has one as soon as it is written; vectors of a configured provider are added by search/vectors.ts).
 */
function insertStatement(
  db: Database,
  title: string | null,
): (datasetId: number, sourceId: number, index: number, chunk: ChunkInput, generation: number) => void {
  const insert = db.prepare(
    'INSERT INTO chunks (dataset_id, source_id, chunk_index, text, generation, heading, first_row, last_row, title) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const vector = db.prepare('INSERT OR REPLACE INTO chunk_vectors (model, chunk_id, dataset_id, scale, vec) VALUES (?, ?, ?, ?, ?)');
  // One float and one byte vector for every chunk of the statement (SQLite copies a bound blob).
  const floats = new Float32Array(HASHED_DIMS);
  const bytes = new Int8Array(HASHED_DIMS);
  const blob = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (datasetId, sourceId, index, chunk, generation) => {
    const c = typeof chunk === 'string' ? { text: chunk, heading: null, firstRow: null, lastRow: null } : chunk;
    const id = insert.run(datasetId, sourceId, index, c.text, generation, c.heading, c.firstRow, c.lastRow, title).lastInsertRowid;
    const given = typeof chunk === 'string' ? undefined : chunk.vector;
    if (given !== undefined) {
      vector.run(HASHED_MODEL, id, datasetId, given.scale, Buffer.from(given.vec.buffer, given.vec.byteOffset, given.vec.byteLength));
      return;
    }
    const { scale } = quantize(hashedVector(c.text, undefined, floats), bytes);
    vector.run(HASHED_MODEL, id, datasetId, scale, blob);
  };
}

/**
 * Which source a replacement's chunks belong to, and its title: the file's name or the entry's title,
 * searched beside every chunk's text (null: none).
 */
export type ChunkSource = { datasetId: number; sourceId: number; title?: string | null };

/** Replaces all chunks of a source with `chunks` (in order, chunk_index 0..n-1) in one transaction. */
export function replaceChunks(db: Database, r: ChunkSource & { chunks: readonly ChunkInput[] }): void {
  const insert = insertStatement(db, r.title ?? null);
  writeTransaction(db, () => {
    const generation = newGeneration(db, r.datasetId, r.sourceId);
    r.chunks.forEach((chunk, index) => insert(r.datasetId, r.sourceId, index, chunk, generation));
    makeLive(db, r.sourceId, generation);
  })();
}

/** Takes a source's chunks out of search (they are deleted by `collectChunkGarbage`); returns how many were live. */
export function deleteChunks(db: Database, sourceId: number): number {
  return writeTransaction(db, () => {
    const { n } = db
      .prepare(
        `SELECT COUNT(*) AS n FROM chunks c JOIN chunk_generations g ON g.id = c.generation WHERE g.source_id = ? AND g.state = 'live'`,
      )
      .get(sourceId) as { n: number };
    db.prepare(`UPDATE chunk_generations SET state = 'garbage' WHERE source_id = ? AND state IN ('live', 'staging')`).run(sourceId);
    bumpVectorRevision(db);
    return n;
  })();
}

const SYNC_NORMAL = 1;

/**
 * Runs `write` (one transaction) with `synchronous = NORMAL` when the connection is set stricter,
 * restoring the setting after. In WAL mode a NORMAL commit is atomic and consistent but may be
 * rolled back by a power cut; every later FULL commit syncs the WAL and so these writes with it.
 * Only for writes whose loss is harmless. Inside an outer transaction the setting cannot change:
 * `write` then simply runs.
 */
function relaxedSync<T>(db: Database, write: () => T): T {
  if (db.inTransaction) return write();
  const level = db.pragma('synchronous', { simple: true }) as number;
  if (level <= SYNC_NORMAL) return write();
  db.pragma('synchronous = NORMAL');
  try {
    return write();
  } finally {
    db.pragma(`synchronous = ${level}`);
  }
}

/** A replacement being written in batches; see `beginChunkReplace`. */
export type ChunkReplace = {
  /** Appends chunks (staging, invisible to search), in one short transaction. */
  add(chunks: readonly ChunkInput[]): void;
  /** Makes the new chunks live and retires the old ones in one short transaction, running `alsoInTx` inside it; returns the chunk count. */
  commit(alsoInTx?: (chunkCount: number) => void): number;
  /** Drops the new chunks (they become garbage); the old ones stay live. */
  abort(): void;
};

/** Starts replacing a source's chunks without holding a write transaction while the file is parsed. */
export function beginChunkReplace(db: Database, r: ChunkSource): ChunkReplace {
  const insert = insertStatement(db, r.title ?? null);
  const generation = newGeneration(db, r.datasetId, r.sourceId);
  let count = 0;
  const addBatch = writeTransaction(db, (chunks: readonly ChunkInput[]) => {
    for (const chunk of chunks) insert(r.datasetId, r.sourceId, count++, chunk, generation);
  });
  return {
    add: (chunks) => relaxedSync(db, () => addBatch(chunks)),
    commit: (alsoInTx) =>
      writeTransaction(db, () => {
        makeLive(db, r.sourceId, generation);
        alsoInTx?.(count);
        return count;
      })(),
    abort: () => {
      db.prepare(`UPDATE chunk_generations SET state = 'garbage' WHERE id = ? AND state = 'staging'`).run(generation);
    },
  };
}

/**
 * Deletes up to `maxRows` chunks of retired generations (and the generations once empty), in one
 * transaction; returns how many chunks it deleted (0: nothing left). Must not run while a
 * replacement is being written, which the single processing worker guarantees by calling it between items.
 */
export function collectChunkGarbage(db: Database, maxRows: number): number {
  return relaxedSync(
    db,
    writeTransaction(db, () => {
      const deleted = db
        .prepare(
          `DELETE FROM chunks WHERE id IN (
           SELECT c.id FROM chunk_generations g JOIN chunks c ON c.generation = g.id WHERE g.state = 'garbage' LIMIT ?
         )`,
        )
        .run(Math.max(1, Math.floor(maxRows))).changes;
      if (deleted < maxRows) {
        db.prepare(
          `DELETE FROM chunk_generations WHERE state = 'garbage' AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.generation = chunk_generations.id)`,
        ).run();
      }
      return deleted;
    }),
  );
}

type Row = {
  id: number;
  text: string;
  sourceId: number;
  chunkIndex: number;
  heading: string | null;
  firstRow: number | null;
  lastRow: number | null;
  rank: number;
  datasetId: number | null;
  state: string | null;
};

/** The columns of a chunk row that a search hit carries (table alias `c`). */
const HIT_COLUMNS = `c.id AS id, c.text AS text, c.source_id AS sourceId, c.chunk_index AS chunkIndex,
         c.heading AS heading, c.first_row AS firstRow, c.last_row AS lastRow`;

// The best-ranked matches of the whole index, then their rows; FTS5 finds and ranks, the join only
// looks up `window` rows by primary key. Enough for a dataset that holds most of the index.
const WINDOWED = `
  SELECT ${HIT_COLUMNS}, f.rank AS rank, c.dataset_id AS datasetId, g.state AS state
  FROM (SELECT rowid AS id, ${FIELD_BM25} AS rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?) AS f
  LEFT JOIN chunks c ON c.id = f.id
  LEFT JOIN chunk_generations g ON g.id = c.generation
  ORDER BY f.rank, f.id`;

// Every match, filtered by dataset before ranking: for a dataset that is a small part of the index.
const FILTERED = `
  SELECT ${HIT_COLUMNS}, ${FIELD_BM25} AS rank, c.dataset_id AS datasetId, g.state AS state
  FROM chunks_fts CROSS JOIN chunks c ON c.id = chunks_fts.rowid CROSS JOIN chunk_generations g ON g.id = c.generation
  WHERE chunks_fts MATCH ? AND c.dataset_id = ? AND g.state = 'live'
  ORDER BY rank, c.id
  LIMIT ?`;

/** A chunk matched by BM25: its row id, text, source, index, origin and the bm25() value (more negative is better). */
export type LexicalMatch = { id: number; text: string; sourceId: number; chunkIndex: number; origin: HitOrigin; bm25: number };

/**
 * The dataset's searchable chunks that best match free-text `query` by FTS5 BM25, best first, at
 * most `limit`; ties broken by insertion order. None for a query with no searchable term.
 */
export function lexicalMatches(db: Database, datasetId: number, query: string, limit: number): LexicalMatch[] {
  const match = toFtsQuery(query);
  const n = Math.max(1, Math.floor(limit));
  if (match === null || !Number.isFinite(n)) return [];
  const window = Math.max(64, n * 8);
  const windowed = db.prepare(WINDOWED).all(match, window) as Row[];
  let rows = windowed.filter((r) => r.datasetId === datasetId && r.state === 'live').slice(0, n);
  if (rows.length < n && windowed.length === window) rows = db.prepare(FILTERED).all(match, datasetId, n) as Row[];
  return rows.map((r) => ({
    id: r.id,
    text: r.text,
    sourceId: r.sourceId,
    chunkIndex: r.chunkIndex,
    origin: { heading: r.heading, firstRow: r.firstRow, lastRow: r.lastRow },
    bm25: r.rank,
  }));
}

/**
 * The dataset's chunks that best match free-text `query`, by FTS5 BM25 alone (the service ranks
 * with search/hybrid.ts; this is its lexical half and the evaluation's baseline), best first, at most `topK`,
 * with scores in [0, 1] (see `scoreFromBm25`) and at least `scoreThreshold` when given; ties are
 * broken by insertion order. A query with no searchable term (empty, punctuation, only stopwords)
 * finds nothing.
 */
export function searchChunks(db: Database, q: { datasetId: number; query: string; topK: number; scoreThreshold?: number }): ChunkHit[] {
  const threshold = q.scoreThreshold ?? 0;
  return lexicalMatches(db, q.datasetId, q.query, q.topK)
    .map((r) => ({ text: r.text, score: scoreFromBm25(r.bm25), knowledgeSourceId: r.sourceId, chunkIndex: r.chunkIndex, origin: r.origin }))
    .filter((hit) => hit.score >= threshold);
}

/** How many searchable chunks the dataset has. */
export function countChunks(db: Database, datasetId: number): number {
  const row = db
    .prepare(
      `SELECT COUNT(*) AS n FROM chunk_generations g JOIN chunks c ON c.generation = g.id WHERE g.dataset_id = ? AND g.state = 'live'`,
    )
    .get(datasetId) as { n: number };
  return row.n;
}

/**
 * Re-indexes the dataset's chunks in one transaction: their index entries are deleted and written
 * again from `chunks` (one fresh, compact segment for the dataset), then FTS5 does a bounded amount
 * of segment merging. Returns the searchable chunk count. Other datasets' entries are not touched.
 */
export function reindexChunks(db: Database, datasetId: number): number {
  return writeTransaction(db, () => {
    db.prepare(
      `INSERT INTO chunks_fts (chunks_fts, rowid, text, heading, title) SELECT 'delete', id, text, heading, title FROM chunks WHERE dataset_id = ?`,
    ).run(datasetId);
    db.prepare('INSERT INTO chunks_fts (rowid, text, heading, title) SELECT id, text, heading, title FROM chunks WHERE dataset_id = ?').run(
      datasetId,
    );
    db.prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('merge', 500)`).run();
    bumpVectorRevision(db);
    return countChunks(db, datasetId);
  })();
}

/** Rebuilds the whole full-text index from `chunks` (repair; cost grows with every dataset's chunks). */
export function rebuildSearchIndex(db: Database): void {
  db.prepare(`INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')`).run();
}
