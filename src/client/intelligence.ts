import type { Http } from './http.js';
import * as S from './schemas.js';
import type { IntelligenceInput, KnowledgeClient } from './types.js';

/** Intelligence endpoints (v2): write one (paid), write a batch (paid), list. */

type IntelligenceMethods = Pick<KnowledgeClient, 'writeIntelligence' | 'writeIntelligenceBatch' | 'listIntelligence'>;

const entryBody = (e: IntelligenceInput) => ({ content: e.content, title: e.title, metadata: e.metadata });

/** The intelligence methods of a client bound to `http`. */
export function intelligenceMethods(http: Http): IntelligenceMethods {
  return {
    writeIntelligence: (b, o) =>
      http.call(
        {
          method: 'POST',
          api: 'v2',
          path: '/datasets/intelligence',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: { agent_id: S.wireId(b.agentId), ...entryBody(b) },
        },
        S.IntelligenceWrite,
      ),
    writeIntelligenceBatch: (b, o) =>
      http.call(
        {
          method: 'POST',
          api: 'v2',
          path: '/datasets/intelligence/batch',
          kind: 'paid',
          idempotencyKey: o?.idempotencyKey,
          json: { agent_id: S.wireId(b.agentId), entries: b.entries.map(entryBody) },
        },
        S.IntelligenceBatch,
      ),
    listIntelligence: (p) =>
      http.call(
        { method: 'GET', api: 'v2', path: '/datasets/intelligence', kind: 'idempotent', query: { limit: p?.limit, offset: p?.offset } },
        S.IntelligenceList,
      ),
  };
}
