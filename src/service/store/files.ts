import type { Database } from 'better-sqlite3';
import { insertKnowledgeSource } from './datasets.js';
import { writeTransaction } from './write-transaction.js';

export type FileStatus = 'queued' | 'processing' | 'processed' | 'failed';

export type FileRow = {
  id: number;
  dataset_id: number;
  name: string;
  size: number;
  sha256: string;
  status: FileStatus;
  error: string | null;
  chunk_count: number | null;
  stored_path: string;
  attempts: number;
  created_at: string;
  updated_at: string;
};

/** Inserts an uploaded file in status `queued`; returns its row. */
export function insertFile(
  db: Database,
  f: { datasetId: number; name: string; size: number; sha256: string; storedPath: string; now: string },
): FileRow {
  // One transaction: the id and the position (the insert trigger's max + 1) are taken together, so seq order is id order.
  return writeTransaction(db, () => {
    const id = insertKnowledgeSource(db, f.datasetId, 'file');
    db.prepare(
      `INSERT INTO files (id, dataset_id, name, size, sha256, status, stored_path, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)`,
    ).run(id, f.datasetId, f.name, f.size, f.sha256, f.storedPath, f.now, f.now);
    return getFile(db, f.datasetId, id) as FileRow;
  })();
}

/** The file with this id in this dataset, or undefined (another dataset's file is invisible). */
export function getFile(db: Database, datasetId: number, id: number): FileRow | undefined {
  return db.prepare('SELECT * FROM files WHERE id = ? AND dataset_id = ?').get(id, datasetId) as FileRow | undefined;
}

/** Positions per files_blocks row (the migration's `seq >> 10`). */
const BLOCK_SHIFT = 10;

/**
 * One page of a dataset's files ordered by id, and the dataset's file count. Positions (seq) keep id
 * order but have gaps where files were deleted, so the offset is found by summing the files per block
 * up to it, then skipping fewer than a block's worth inside it: no scan of the rows before the page.
 */
export function listFiles(db: Database, datasetId: number, page: { limit: number; offset: number }): { rows: FileRow[]; total: number } {
  return db.transaction(() => {
    const total = db.prepare('SELECT COALESCE(SUM(n), 0) FROM files_blocks WHERE dataset_id = ?').pluck().get(datasetId) as number;
    if (page.offset >= total || page.limit === 0) return { rows: [], total };
    const start = db
      .prepare(
        `SELECT block, upto - n AS before FROM (
           SELECT block, n, SUM(n) OVER (ORDER BY block ROWS UNBOUNDED PRECEDING) AS upto FROM files_blocks WHERE dataset_id = ?
         ) WHERE upto > ? ORDER BY block LIMIT 1`,
      )
      .get(datasetId, page.offset) as { block: number; before: number };
    const rows = db
      .prepare('SELECT * FROM files WHERE dataset_id = ? AND seq >= ? ORDER BY seq LIMIT ? OFFSET ?')
      .all(datasetId, start.block << BLOCK_SHIFT, page.limit, page.offset - start.before) as FileRow[];
    return { rows, total };
  })();
}

/** Puts a file back in the processing queue (reprocess); clears its previous error. */
export function requeueFile(db: Database, datasetId: number, id: number, now: string): FileRow | undefined {
  db.prepare(`UPDATE files SET status = 'queued', error = NULL, updated_at = ? WHERE id = ? AND dataset_id = ?`).run(now, id, datasetId);
  return getFile(db, datasetId, id);
}

/** A knowledge source's name: the file's name, or an intelligence entry's title; undefined when it has none. */
export function sourceName(db: Database, sourceId: number): string | undefined {
  const row = db
    .prepare(`SELECT COALESCE((SELECT name FROM files WHERE id = ?), (SELECT title FROM intelligence WHERE id = ?)) AS name`)
    .get(sourceId, sourceId) as { name: string | null };
  return row.name ?? undefined;
}
