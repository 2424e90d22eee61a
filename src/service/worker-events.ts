import type { IntelligenceEventEntry, IntelligenceEventKind } from './ingest/worker.js';

/** Turns a worker report into the webhook event of docs/api.md (`data: {entry_id, dataset_id, agent_id, sha256, error?}`). */
export function intelligenceEventData(kind: IntelligenceEventKind, entry: IntelligenceEventEntry): Record<string, unknown> {
  const data: Record<string, unknown> = { entry_id: entry.id, dataset_id: entry.datasetId, agent_id: entry.agentId, sha256: entry.sha256 };
  if (kind === 'intelligence.failed') data['error'] = entry.error ?? 'processing failed';
  return data;
}
