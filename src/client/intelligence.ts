import type { Http } from './http.js';
import * as S from './schemas.js';
import type { IntelligenceEntry, IntelligenceInput, IntelligenceWrite, Page, PaidOpts } from './types.js';

/** Intelligence endpoints (v2): write one (paid), write a batch (paid), list. */

export interface IntelligenceMethods {
  writeIntelligence(b: { agentId: string } & IntelligenceInput, o?: PaidOpts): Promise<IntelligenceWrite>;
  writeIntelligenceBatch(
    b: { agentId: string; entries: IntelligenceInput[] },
    o?: PaidOpts,
  ): Promise<{ results: IntelligenceWrite[]; created: number; duplicates: number; creditsCharged: number }>;
  listIntelligence(p?: Page): Promise<{ entries: IntelligenceEntry[]; total: number }>;
}

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
