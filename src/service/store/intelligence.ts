import type { Database } from 'better-sqlite3';
import { insertKnowledgeSource } from './datasets.js';

export type IntelligenceStatus = 'pending' | 'processed' | 'failed';

export type IntelligenceRow = {
  id: number;
  dataset_id: number;
  agent_id: number;
  title: string | null;
  content: string;
  metadata_json: string | null;
  sha256: string;
  status: IntelligenceStatus;
  error: string | null;
  created_at: string;
  updated_at: string;
};

/** The entry of this dataset whose content has this SHA-256, or undefined. */
export function findEntryBySha(db: Database, datasetId: number, sha256: string): IntelligenceRow | undefined {
  return db.prepare('SELECT * FROM intelligence WHERE dataset_id = ? AND sha256 = ?').get(datasetId, sha256) as IntelligenceRow | undefined;
}

/** Inserts a new entry in status `pending`; returns its row. */
export function insertEntry(
  db: Database,
  e: { datasetId: number; agentId: number; title: string | null; content: string; metadata: unknown; sha256: string; now: string },
): IntelligenceRow {
  const id = insertKnowledgeSource(db, e.datasetId, 'intelligence');
  db.prepare(
    `INSERT INTO intelligence (id, dataset_id, agent_id, title, content, metadata_json, sha256, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
  ).run(
    id,
    e.datasetId,
    e.agentId,
    e.title,
    e.content,
    e.metadata === undefined ? null : JSON.stringify(e.metadata),
    e.sha256,
    e.now,
    e.now,
  );
  return db.prepare('SELECT * FROM intelligence WHERE id = ?').get(id) as IntelligenceRow;
}

/** One page of a dataset's entries ordered by id, and the dataset's entry count. */
export function listEntries(
  db: Database,
  datasetId: number,
  page: { limit: number; offset: number },
): { rows: IntelligenceRow[]; total: number } {
  const rows = db
    .prepare('SELECT * FROM intelligence WHERE dataset_id = ? ORDER BY id LIMIT ? OFFSET ?')
    .all(datasetId, page.limit, page.offset) as IntelligenceRow[];
  const { n } = db.prepare('SELECT COUNT(*) AS n FROM intelligence WHERE dataset_id = ?').get(datasetId) as { n: number };
  return { rows, total: n };
}
