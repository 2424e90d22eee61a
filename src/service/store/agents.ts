import type { Database } from 'better-sqlite3';

export type DatasetMode = 'read_only' | 'self_learning';

export type AgentRow = { id: number; name: string; config_json: string; created_at: string; updated_at: string };
export type AttachmentRow = { dataset_id: number; name: string; mode: DatasetMode };

/** Creates an agent attached to `datasetId` in `read_only` mode; returns its row. */
export function insertAgent(db: Database, a: { datasetId: number; name: string; config: Record<string, unknown>; now: string }): AgentRow {
  const info = db
    .prepare('INSERT INTO agents (name, config_json, created_at, updated_at) VALUES (?, ?, ?, ?)')
    .run(a.name, JSON.stringify(a.config), a.now, a.now);
  const id = Number(info.lastInsertRowid);
  db.prepare(`INSERT INTO agent_datasets (agent_id, dataset_id, mode, created_at) VALUES (?, ?, 'read_only', ?)`).run(
    id,
    a.datasetId,
    a.now,
  );
  return db.prepare('SELECT * FROM agents WHERE id = ?').get(id) as AgentRow;
}

/** The agent when it is attached to `datasetId` (the only agents a dataset's key may see), else undefined. */
export function getVisibleAgent(db: Database, datasetId: number, agentId: number): AgentRow | undefined {
  return db
    .prepare('SELECT a.* FROM agents a JOIN agent_datasets ad ON ad.agent_id = a.id WHERE a.id = ? AND ad.dataset_id = ?')
    .get(agentId, datasetId) as AgentRow | undefined;
}

/** The agents attached to `datasetId`, by id. */
export function listVisibleAgents(db: Database, datasetId: number): AgentRow[] {
  return db
    .prepare('SELECT a.* FROM agents a JOIN agent_datasets ad ON ad.agent_id = a.id WHERE ad.dataset_id = ? ORDER BY a.id')
    .all(datasetId) as AgentRow[];
}

/** Replaces an agent's config. */
export function setAgentConfig(db: Database, agentId: number, config: Record<string, unknown>, now: string): void {
  db.prepare('UPDATE agents SET config_json = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(config), now, agentId);
}

/** The datasets an agent is attached to, with their names and modes. */
export function listAttachments(db: Database, agentId: number): AttachmentRow[] {
  return db
    .prepare(
      'SELECT ad.dataset_id, d.name, ad.mode FROM agent_datasets ad JOIN datasets d ON d.id = ad.dataset_id WHERE ad.agent_id = ? ORDER BY ad.dataset_id',
    )
    .all(agentId) as AttachmentRow[];
}

/** The mode of one attachment, or undefined when the agent is not attached to the dataset. */
export function attachmentMode(db: Database, agentId: number, datasetId: number): DatasetMode | undefined {
  const row = db.prepare('SELECT mode FROM agent_datasets WHERE agent_id = ? AND dataset_id = ?').get(agentId, datasetId) as
    { mode: DatasetMode } | undefined;
  return row?.mode;
}

/** Attaches a dataset to an agent (no-op when already attached). */
export function insertAttachment(db: Database, a: { agentId: number; datasetId: number; mode: DatasetMode; now: string }): void {
  db.prepare('INSERT OR IGNORE INTO agent_datasets (agent_id, dataset_id, mode, created_at) VALUES (?, ?, ?, ?)').run(
    a.agentId,
    a.datasetId,
    a.mode,
    a.now,
  );
}

/** Sets an attachment's mode. */
export function setAttachmentMode(db: Database, agentId: number, datasetId: number, mode: DatasetMode): void {
  db.prepare('UPDATE agent_datasets SET mode = ? WHERE agent_id = ? AND dataset_id = ?').run(mode, agentId, datasetId);
}
