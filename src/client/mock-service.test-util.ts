import { MockAgent } from 'undici';
import { createClient } from './client.js';
import type { ClientOptions, KnowledgeClient } from './types.js';

/** Test helper: a client wired to an undici MockAgent that records each request it answers. */

export const ORIGIN = 'http://svc.test';
export const API_KEY = 'kb_live_S3cr3tKeyValue123';

export type SeenRequest = { method: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: unknown };

export type MockReply = { status: number; data?: unknown; headers?: Record<string, string> } | { error: Error };

function lowerHeaders(h: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: [string, unknown][] = Array.isArray(h)
    ? (h as unknown[]).reduce<[string, unknown][]>((acc, v, i, a) => (i % 2 === 0 ? [...acc, [String(v), a[i + 1]]] : acc), [])
    : Object.entries((h ?? {}) as Record<string, unknown>);
  for (const [k, v] of entries) out[k.toLowerCase()] = String(v);
  return out;
}

function bodyOf(b: unknown): unknown {
  if (typeof b !== 'string') return b === undefined || b === null ? undefined : '<stream>';
  try {
    return JSON.parse(b);
  } catch {
    return b;
  }
}

/** A MockAgent-backed client; `reply` queues one answer (in order) and records the request. */
export function mockService(opts: Partial<ClientOptions> = {}) {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  const seen: SeenRequest[] = [];
  const reply = (r: MockReply) => {
    const scope = pool.intercept({ path: () => true, method: () => true });
    if ('error' in r) {
      scope.replyWithError(r.error);
      return;
    }
    scope.reply((o) => {
      const url = new URL(o.path, ORIGIN);
      seen.push({
        method: o.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: lowerHeaders(o.headers),
        body: bodyOf(o.body),
      });
      const data = typeof r.data === 'string' ? r.data : JSON.stringify(r.data ?? {});
      return { statusCode: r.status, data, responseOptions: { headers: { 'content-type': 'application/json', ...r.headers } } };
    });
  };
  const client: KnowledgeClient = createClient({ baseUrl: ORIGIN, apiKey: API_KEY, dispatcher: agent, ...opts });
  /** How many requests reached the mock (answered or failed). */
  const attempts = () => agent.getCallHistory()?.calls().length ?? 0;
  return { agent, client, seen, reply, attempts };
}
