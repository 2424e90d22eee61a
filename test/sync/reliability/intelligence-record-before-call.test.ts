import Database from 'better-sqlite3';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/shared/plans.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

/**
 * "No paid call without its record" for intelligence writes: at the moment each write reaches the service
 * (the fault proxy, forwarding everything), the state database, read by a connection of its own, already
 * holds the outbox row carrying that request's Idempotency-Key, in flight, with its credits reserved:
 * one entry a call on the basic plan, batches on pro.
 */

const suite = useE2eSuite({ proxy: true });

type Row = { kind: string; state: string; credits: number; reserved: number };

function rowOf(ws: Workspace, key: string | undefined): Row | undefined {
  if (key === undefined || !existsSync(ws.statePath)) return undefined;
  const db = new Database(ws.statePath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT kind, state, credits, reserved FROM outbox WHERE idempotency_key = ?').get(key) as Row | undefined;
  } finally {
    db.close();
  }
}

async function call(method: 'POST' | 'PATCH', path: string, apiKey: string, json: unknown): Promise<Record<string, unknown>> {
  const res = await request(`${suite.svc.url}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  });
  return (await res.body.json()) as Record<string, unknown>;
}

describe('no intelligence write without its record', () => {
  it.each([
    ['basic', 'intelligence', 7],
    ['pro', 'intelligence_batch', 1],
  ] as const)(
    'on %s: every write the service receives finds its %s row committed, in flight and reserved',
    async (plan: Plan, kind, calls) => {
      suite.proxy.setHooks({});
      suite.proxy.requests.length = 0;
      const ds = suite.svc.dataset({ plan, credits: 1000 });
      const agent = await call('POST', '/api/v1/ext/agents/', ds.apiKey, { name: 'helper' });
      await call('PATCH', `/api/v2/ext/agents/${String(agent.id)}/datasets/${ds.datasetId}`, ds.apiKey, { mode: 'self_learning' });
      const ws = createWorkspace(suite.temp.make(), {
        baseUrl: suite.proxy.url,
        apiKey: ds.apiKey,
        plan,
        config: { sources: [{ name: 'kb', path: './kb', as: 'intelligence', agent: agent.id }] },
      });
      mkdirSync(join(ws.root, 'kb'));
      writeFileSync(
        join(ws.root, 'kb', 'facts.jsonl'),
        Array.from({ length: 7 }, (_, i) => JSON.stringify({ content: `Fact ${i}.` })).join('\n'),
      );
      const seen: (Row | undefined)[] = [];
      suite.proxy.setHooks({
        onRequest: (req) => {
          if (req.method === 'POST' && req.url.startsWith('/api/v2/ext/datasets/intelligence'))
            seen.push(rowOf(ws, req.headers['idempotency-key']));
          return { kind: 'forward' };
        },
      });
      const r = await ws.runJson('sync');
      suite.proxy.setHooks({});
      expect(r.code, r.stderr).toBe(0);
      expect(seen).toHaveLength(calls);
      for (const row of seen) expect(row).toEqual({ kind, state: 'in_flight', credits: 7 / calls, reserved: 7 / calls });
    },
  );
});
