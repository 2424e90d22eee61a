import type { Http } from './http.js';
import * as S from './schemas.js';
import type { DatasetMode } from './types.js';

/** Agent-dataset management (v2): list attachments, attach, set the mode. All free. */

export interface AgentDatasetMethods {
  listAgentDatasets(agentId: string): Promise<{ id: string; name: string | null; mode: DatasetMode }[]>;
  attachDataset(agentId: string, b: { datasetId: string; mode?: DatasetMode }): Promise<{ id: string; mode: DatasetMode }>;
  setDatasetMode(agentId: string, datasetId: string, mode: DatasetMode): Promise<{ id: string; mode: DatasetMode }>;
}

const datasetsPath = (agentId: string) => `/agents/${encodeURIComponent(agentId)}/datasets`;

/** The agent-dataset methods of a client bound to `http`. */
export function agentDatasetMethods(http: Http): AgentDatasetMethods {
  return {
    listAgentDatasets: (agentId) =>
      http.call(
        { method: 'GET', api: 'v2', path: datasetsPath(agentId), route: '/agents/{id}/datasets', kind: 'idempotent' },
        S.AgentDatasetList,
      ),
    // Attaching is a set operation (attached or not) and setting a mode is an absolute PATCH:
    // both are free and converge when repeated, so both are retried.
    attachDataset: (agentId, b) =>
      http.call(
        {
          method: 'POST',
          api: 'v2',
          path: datasetsPath(agentId),
          route: '/agents/{id}/datasets',
          kind: 'idempotent',
          json: { dataset_id: S.wireId(b.datasetId), mode: b.mode },
        },
        S.AgentDatasetRef,
      ),
    setDatasetMode: (agentId, datasetId, mode) =>
      http.call(
        {
          method: 'PATCH',
          api: 'v2',
          path: `${datasetsPath(agentId)}/${encodeURIComponent(datasetId)}`,
          route: '/agents/{id}/datasets/{id}',
          kind: 'idempotent',
          json: { mode },
        },
        S.AgentDatasetRef,
      ),
  };
}
