import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, credits, eventually, startHarness, upload, type Api, type Harness } from './helpers.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH';
let h: Harness;
let a: Api;
let b: Api;
const own = { agentId: 0, fileId: 0, webhookId: 0 };

beforeAll(async () => {
  h = await startHarness({ allowInsecureWebhooks: true });
  a = apiFor(h, { name: 'A', credits: 100 });
  b = apiFor(h, { name: 'B', credits: 100 });
  own.agentId = (await a.call('POST', '/api/v1/ext/agents/', { json: { name: 'A agent' } })).body.id;
  await a.call('PATCH', `/api/v2/ext/agents/${own.agentId}/datasets/${a.datasetId}`, { json: { mode: 'self_learning' } });
  own.fileId = (await upload(a, 'secret-plans.md', 'The zeppelin launch is scheduled for spring.')).body.id;
  own.webhookId = (await a.call('POST', '/api/v2/ext/webhooks', { json: { url: 'http://127.0.0.1:9/hook' } })).body.id;
  await eventually(async () => ((await a.call('GET', '/api/v1/ext/files/')).body.files[0].status === 'processed' ? true : undefined));
});
afterAll(async () => {
  await h.close();
});

describe('a key sees only its own dataset', () => {
  const cases: [Method, () => string, unknown][] = [
    ['GET', () => `/api/v1/ext/agents/${own.agentId}`, undefined],
    ['PUT', () => `/api/v1/ext/agents/${own.agentId}/config`, { config: {} }],
    ['POST', () => `/api/v1/ext/agents/${own.agentId}/chat`, { message: 'zeppelin?' }],
    ['POST', () => `/api/v1/ext/files/${own.fileId}/reprocess`, {}],
    ['POST', () => '/api/v2/ext/datasets/intelligence', () => ({ agent_id: own.agentId, content: 'x' })],
    ['GET', () => `/api/v2/ext/agents/${own.agentId}/datasets`, undefined],
    ['POST', () => `/api/v2/ext/agents/${own.agentId}/datasets`, () => ({ dataset_id: Number(b.datasetId) })],
    ['PATCH', () => `/api/v2/ext/agents/${own.agentId}/datasets/${a.datasetId}`, { mode: 'read_only' }],
    ['POST', () => `/api/v2/ext/webhooks/${own.webhookId}/test`, undefined],
    ['GET', () => `/api/v1/ext/datasets/?dataset_id=${a.datasetId}`, undefined],
  ];
  it.each(cases)('%s %# from another dataset is 404 and free', async (method, path, json) => {
    const res = await b.call(method, path(), { json: typeof json === 'function' ? json() : json });

    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect(await credits(b)).toBe(100);
  });

  it('lists and queries show nothing of the other dataset', async () => {
    const [agents, files, entries, hooks, hits] = await Promise.all([
      b.call('GET', '/api/v1/ext/agents/'),
      b.call('GET', '/api/v1/ext/files/'),
      b.call('GET', '/api/v2/ext/datasets/intelligence'),
      b.call('GET', '/api/v2/ext/webhooks'),
      b.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'zeppelin launch' } }),
    ]);
    const ownHits = await a.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'zeppelin launch' } });

    expect(agents.body).toEqual({ agents: [] });
    expect(files.body).toEqual({ files: [], total: 0 });
    expect(entries.body).toEqual({ entries: [], total: 0 });
    expect(hooks.body).toEqual({ webhooks: [] });
    expect(hits.body).toEqual({ results: [] });
    expect(ownHits.body.results[0].knowledge_source_id).toBe(own.fileId);
  });

  it('the owner still sees everything', async () => {
    const agent = await a.call('GET', `/api/v1/ext/agents/${own.agentId}`);

    expect(agent.status).toBe(200);
    expect(agent.body.datasets).toEqual([{ id: Number(a.datasetId), mode: 'self_learning' }]);
  });
});
