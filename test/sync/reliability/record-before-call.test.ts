import Database from 'better-sqlite3';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { printFigures } from '../../helpers/figures.js';
import type { ProxiedRequest } from '../../helpers/fault-proxy.js';
import { createWorkspace, itemOf, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

/**
 * The promise "no paid call without its record", checked where it matters: at the moment each paid
 * request reaches the service (the fault proxy, forwarding everything), the state database, read by a
 * connection of its own, must already hold the outbox row carrying that request's Idempotency-Key, in
 * flight, with its credits reserved. Every kind of paid call kbsync makes is exercised: uploads, a
 * reprocess, a reindex, a query, an agent's creation and config, a chat and a check's batch query.
 */

const suite = useE2eSuite({ proxy: true });

type PaidKind = 'upload' | 'reprocess' | 'reindex' | 'query' | 'chat' | 'agent_create' | 'agent_config';
type Seen = {
  kind: PaidKind | 'other';
  url: string;
  key: string | undefined;
  row: { kind: string; state: string; credits: number; reserved: number } | undefined;
};

/** The kind of paid call a POST is (docs/api.md's paid endpoints), or 'other'. */
function paidKindOf(req: ProxiedRequest): PaidKind | 'other' {
  const path = req.url.split('?')[0] ?? '';
  if (path.endsWith('/files/upload')) return 'upload';
  if (/\/files\/[^/]+\/reprocess\/?$/.test(path)) return 'reprocess';
  if (/\/datasets\/reindex\/?$/.test(path)) return 'reindex';
  // A batch query (kbsync check on an Advanced-tier plan) is one outbox row of kind 'query', 1 credit per question.
  if (/\/datasets\/query(\/batch)?\/?$/.test(path)) return 'query';
  if (/\/agents\/[^/]+\/chat\/?$/.test(path)) return 'chat';
  if (req.method === 'POST' && /\/agents\/?$/.test(path)) return 'agent_create';
  if (req.method === 'PUT' && /\/agents\/[^/]+\/config$/.test(path)) return 'agent_config';
  return 'other';
}

/** The outbox row holding `key`, read from the state file by a connection of its own (committed rows only). */
function rowOf(ws: Workspace, key: string | undefined): Seen['row'] {
  if (key === undefined || !existsSync(ws.statePath)) return undefined;
  const db = new Database(ws.statePath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT kind, state, credits, reserved FROM outbox WHERE idempotency_key = ?').get(key) as Seen['row'];
  } finally {
    db.close();
  }
}

describe('no paid call without its record', () => {
  it('every paid request the service receives (upload, reprocess, reindex, query, agent create and config, chat, batch query) finds its outbox row committed, in flight and reserved', async () => {
    suite.proxy.setHooks({});
    suite.proxy.requests.length = 0;
    const ds = suite.svc.dataset({ plan: 'pro', credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      plan: 'pro',
      config: { upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 1 }, reindex: { minChangedFiles: 2 } },
    });
    ws.write('a.md', '# A\nalpha\n');
    ws.write('b.md', '# B\nbravo\n');
    ws.write('c.csv', 'x,y\n1,2\n');
    ws.write('bad.json', '{"unterminated": [1, 2,\n'); // fails processing: reprocessed once under --wait (see onResponse)
    const seen: Seen[] = [];
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (req.method === 'POST' || req.method === 'PUT') {
          const key = req.headers['idempotency-key'];
          seen.push({ kind: paidKindOf(req), url: req.url, key, row: rowOf(ws, key) });
        }
        return { kind: 'forward' };
      },
      // The listing shows the failure without its `parse_failed:` code, as the hosted service would: worth a reprocess.
      onResponse: (req, res) => {
        if (req.method !== 'GET' || !/\/files\/?(\?|$)/.test(req.url) || res.status !== 200) return 'relay';
        const listing = JSON.parse(res.body.toString()) as { files: { error?: string | null }[] };
        for (const f of listing.files) if (typeof f.error === 'string') f.error = f.error.replace(/^[a-z_]+: /, '');
        res.body = Buffer.from(JSON.stringify(listing));
        return 'relay';
      },
    });
    const start = await ds.balance();

    const sync = await ws.runJson('sync', '--wait', '--wait-timeout', '20');
    const query = await ws.run('query', 'alpha');
    const agent = await ws.run('agents', 'create', 'reliability');
    const config = await ws.run('agents', 'config', 'reliability', '--top-k', '3');
    const chat = await ws.run('chat', 'reliability', 'what is alpha?');
    writeFileSync(join(ws.root, 'checks.yaml'), '- question: alpha\n  expect: [a.md]\n- question: bravo\n  expect: [b.md]\n');
    const check = await ws.run('check', '--questions', 'checks.yaml');
    const charged = start - (await ds.balance());

    expect(sync.report.summary).toMatchObject({ uploaded: 3, failed: 1 });
    expect(itemOf(sync.report, 'bad.json').outcome).toBe('failed');
    expect([query.code, agent.code, config.code, chat.code, check.code]).toEqual([0, 0, 0, 0, 0]);
    const count = (kind: PaidKind | 'other'): number => seen.filter((s) => s.kind === kind).length;
    expect({
      upload: count('upload'),
      reprocess: count('reprocess'),
      reindex: count('reindex'),
      query: count('query'),
      agent_create: count('agent_create'),
      agent_config: count('agent_config'),
      chat: count('chat'),
      other: count('other'),
    }).toEqual({ upload: 4, reprocess: 1, reindex: 1, query: 2, agent_create: 1, agent_config: 1, chat: 1, other: 0 });
    const withoutRecord = seen.filter(
      (s) =>
        s.row === undefined ||
        s.row.kind !== s.kind ||
        s.row.state !== 'in_flight' ||
        s.row.reserved !== s.row.credits ||
        s.row.credits <= 0,
    );
    expect(withoutRecord, JSON.stringify(withoutRecord)).toEqual([]);
    // What the service charged is exactly what those records reserved: no paid call went unrecorded.
    const reserved = seen.reduce((sum, s) => sum + (s.row?.reserved ?? 0), 0);
    expect(charged).toBe(reserved);
    expect(charged).toBe(4 * 5 + 5 + 2 + 1 + 5 + 2 + 1 + 2);
    printFigures('no paid call without its record', {
      'paid requests': seen.length,
      'with their row in flight and reserved': seen.length - withoutRecord.length,
      without: withoutRecord.length,
      'credits charged': charged,
      'credits reserved beforehand': reserved,
    });
  });
});
