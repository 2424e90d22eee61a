import type { AgentRow, AttachmentRow } from '../store/agents.js';
import type { DatasetRow } from '../store/datasets.js';
import type { FileRow } from '../store/files.js';
import type { IntelligenceRow } from '../store/intelligence.js';

/** Row → JSON shapes of docs/api.md (snake_case, integer ids). */

export function datasetJson(d: DatasetRow, knowledgeSourceCount: number) {
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    plan: d.plan,
    credits_remaining: d.credits,
    knowledge_source_count: knowledgeSourceCount,
    created_at: d.created_at,
  };
}

export function fileJson(f: FileRow) {
  return {
    id: f.id,
    name: f.name,
    size: f.size,
    sha256: f.sha256,
    status: f.status,
    chunk_count: f.chunk_count,
    error: f.error,
    created_at: f.created_at,
    updated_at: f.updated_at,
  };
}

export function agentJson(a: AgentRow) {
  return { id: a.id, name: a.name, config: JSON.parse(a.config_json) as Record<string, unknown>, created_at: a.created_at };
}

export function agentWithDatasetsJson(a: AgentRow, attachments: AttachmentRow[]) {
  return { ...agentJson(a), datasets: attachments.map((x) => ({ id: x.dataset_id, mode: x.mode })) };
}

export function entryJson(e: IntelligenceRow) {
  return {
    id: e.id,
    agent_id: e.agent_id,
    title: e.title,
    sha256: e.sha256,
    status: e.status,
    error: e.error,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export type SearchHit = {
  text: string;
  score: number;
  knowledgeSourceId: number | string;
  chunkIndex: number;
  origin?: { heading: string | null; firstRow: number | null; lastRow: number | null };
};

/**
 * A query result or chat source on the wire: the contract's four fields, and `origin` (a local-service
 * extension, docs/api.md): the chunk's heading path or sheet and its first and last source rows, each null where none.
 */
export function hitJson(h: SearchHit) {
  return {
    text: h.text,
    score: h.score,
    knowledge_source_id: Number(h.knowledgeSourceId),
    chunk_index: h.chunkIndex,
    ...(h.origin === undefined ? {} : { origin: { heading: h.origin.heading, first_row: h.origin.firstRow, last_row: h.origin.lastRow } }),
  };
}
