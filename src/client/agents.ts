import type { Http } from './http.js';
import * as S from './schemas.js';
import type { Agent, PaidOpts, QueryResult } from './types.js';

/** Agent endpoints (v1): list, create (paid), get, config (paid), chat (paid). */

export interface AgentMethods {
  listAgents(): Promise<Agent[]>;
  createAgent(b: { name: string; config?: Record<string, unknown> }, o?: PaidOpts): Promise<Agent>;
  getAgent(id: string): Promise<Agent>;
  updateAgentConfig(id: string, config: Record<string, unknown>, o?: PaidOpts): Promise<Agent>;
  chat(agentId: string, message: string, o?: PaidOpts): Promise<{ response: string; sources: QueryResult[] }>;
}

const agentPath = (id: string) => `/agents/${encodeURIComponent(id)}`;

/** The agent methods of a client bound to `http`. */
export function agentMethods(http: Http): AgentMethods {
  return {
    listAgents: () => http.call({ method: 'GET', api: 'v1', path: '/agents/', kind: 'idempotent' }, S.AgentList),
    createAgent: (b, o) =>
      http.call(
        {
          method: 'POST',
          api: 'v1',
          path: '/agents/',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: { name: b.name, config: b.config },
        },
        S.Agent,
      ),
    getAgent: (id) => http.call({ method: 'GET', api: 'v1', path: agentPath(id), route: '/agents/{id}', kind: 'idempotent' }, S.Agent),
    // A PUT, but paid (2 credits): sent once like a paid POST.
    updateAgentConfig: (id, config, o) =>
      http.call(
        {
          method: 'PUT',
          api: 'v1',
          path: `${agentPath(id)}/config`,
          route: '/agents/{id}/config',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: { config },
        },
        S.Agent,
      ),
    chat: (agentId, message, o) =>
      http.call(
        {
          method: 'POST',
          api: 'v1',
          path: `${agentPath(agentId)}/chat`,
          route: '/agents/{id}/chat',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: { message },
        },
        S.Chat,
      ),
  };
}
