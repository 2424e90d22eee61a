import type { Database } from 'better-sqlite3';
import type { Plan } from '../../shared/plans.js';

export type DatasetRow = {
  id: number;
  name: string;
  description: string;
  plan: Plan;
  credits: number;
  created_at: string;
};

/** Inserts a dataset and returns its id. */
export function insertDataset(db: Database, d: { name: string; plan: Plan; credits: number; createdAt: string }): number {
  const info = db
    .prepare('INSERT INTO datasets (name, plan, credits, created_at) VALUES (?, ?, ?, ?)')
    .run(d.name, d.plan, d.credits, d.createdAt);
  return Number(info.lastInsertRowid);
}

/** The dataset with this id, or undefined. */
export function getDataset(db: Database, id: number): DatasetRow | undefined {
  return db.prepare('SELECT * FROM datasets WHERE id = ?').get(id) as DatasetRow | undefined;
}

/** Updates name and/or description; returns the dataset after the change. */
export function updateDataset(db: Database, id: number, patch: { name?: string; description?: string }): DatasetRow | undefined {
  if (patch.name !== undefined) db.prepare('UPDATE datasets SET name = ? WHERE id = ?').run(patch.name, id);
  if (patch.description !== undefined) db.prepare('UPDATE datasets SET description = ? WHERE id = ?').run(patch.description, id);
  return getDataset(db, id);
}

/** Sets a dataset's plan. */
export function setDatasetPlan(db: Database, id: number, plan: Plan): void {
  db.prepare('UPDATE datasets SET plan = ? WHERE id = ?').run(plan, id);
}

/** How many knowledge sources (files and intelligence entries) the dataset holds. */
export function countKnowledgeSources(db: Database, datasetId: number): number {
  const row = db.prepare('SELECT COUNT(*) AS n FROM knowledge_sources WHERE dataset_id = ?').get(datasetId) as { n: number };
  return row.n;
}

/** Allocates the next knowledge-source id (shared by files and intelligence entries). */
export function insertKnowledgeSource(db: Database, datasetId: number, kind: 'file' | 'intelligence'): number {
  const info = db.prepare('INSERT INTO knowledge_sources (dataset_id, kind) VALUES (?, ?)').run(datasetId, kind);
  return Number(info.lastInsertRowid);
}

/** How many datasets exist. */
export function countDatasets(db: Database): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM datasets').get() as { n: number }).n;
}
