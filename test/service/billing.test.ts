import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, credits, startHarness, upload, type Api, type Harness } from './helpers.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function selfLearningAgent(api: Api): Promise<number> {
  const agent = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'writer' } });
  await api.call('PATCH', `/api/v2/ext/agents/${agent.body.id}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
  return agent.body.id as number;
}

describe('costs charged on success (docs/api.md)', () => {
  it('charges each paid operation exactly its cost', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 1000 });
    const charged = async (op: () => Promise<{ status: number }>, expectedStatus: number) => {
      const before = await credits(api);
      const res = await op();
      expect(res.status).toBe(expectedStatus);
      return before - (await credits(api));
    };

    const agentCost = await charged(() => api.call('POST', '/api/v1/ext/agents/', { json: { name: 'a' } }), 201);
    const agents = await api.call('GET', '/api/v1/ext/agents/');
    const agentId = agents.body.agents[0].id as number;
    const configCost = await charged(
      () => api.call('PUT', `/api/v1/ext/agents/${agentId}/config`, { json: { config: { temperature: 0.2 } } }),
      200,
    );
    const chatCost = await charged(() => api.call('POST', `/api/v1/ext/agents/${agentId}/chat`, { json: { message: 'hello' } }), 200);
    const queryCost = await charged(() => api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'hello' } }), 200);
    const batchCost = await charged(
      () => api.call('POST', '/api/v1/ext/datasets/query/batch', { json: { queries: ['a', 'b', 'c'] } }),
      200,
    );
    const reindexCost = await charged(() => api.call('POST', '/api/v1/ext/datasets/reindex', { json: {} }), 200);
    const smallUpload = await charged(() => upload(api, 'a.txt', 'hello'), 201);
    const files = await api.call('GET', '/api/v1/ext/files/');
    const reprocessCost = await charged(() => api.call('POST', `/api/v1/ext/files/${files.body.files[0].id}/reprocess`), 202);
    await api.call('PATCH', `/api/v2/ext/agents/${agentId}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
    const entryCost = await charged(
      () => api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agentId, content: 'fact one' } }),
      201,
    );
    const dupCost = await charged(
      () => api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agentId, content: 'fact one' } }),
      200,
    );
    const batch = await charged(
      () =>
        api.call('POST', '/api/v2/ext/datasets/intelligence/batch', {
          json: { agent_id: agentId, entries: [{ content: 'fact one' }, { content: 'fact two' }, { content: 'fact three' }] },
        }),
      200,
    );
    const free = await charged(() => api.call('GET', '/api/v1/ext/files/'), 200);

    expect({
      agentCost,
      configCost,
      chatCost,
      queryCost,
      batchCost,
      reindexCost,
      smallUpload,
      reprocessCost,
      entryCost,
      dupCost,
      batch,
      free,
    }).toEqual({
      agentCost: 5,
      configCost: 2,
      chatCost: 1,
      queryCost: 1,
      batchCost: 3,
      reindexCost: 2,
      smallUpload: 5,
      reprocessCost: 5,
      entryCost: 1,
      dupCost: 0,
      batch: 2,
      free: 0,
    });
  });

  it.each([
    [5 * 1_048_576, 5],
    [5 * 1_048_576 + 1, 6],
    [6 * 1_048_576 + 1, 7],
  ])('an upload of %i bytes costs %i credits', async (bytes, cost) => {
    const api = apiFor(h, { plan: 'pro', credits: 100 });

    // Not XML at all, so processing fails at once instead of indexing megabytes (the cost is the same).
    const res = await upload(api, 'big.xml', Buffer.alloc(bytes, 'x'));

    expect(res.status).toBe(201);
    expect(res.body.credits_charged).toBe(cost);
    expect(await credits(api)).toBe(100 - cost);
  });
});

describe('rejected calls cost nothing', () => {
  it.each([
    ['top_k over 20', 'POST', '/api/v1/ext/datasets/query', { query: 'x', top_k: 21 }, 422, 'validation_failed'],
    [
      'more than 20 queries',
      'POST',
      '/api/v1/ext/datasets/query/batch',
      { queries: Array.from({ length: 21 }, (_, i) => `q${i}`) },
      422,
      'validation_failed',
    ],
    ['missing query', 'POST', '/api/v1/ext/datasets/query', {}, 400, 'invalid_request'],
    ['unknown agent chat', 'POST', '/api/v1/ext/agents/999/chat', { message: 'hi' }, 404, 'not_found'],
    ['unknown file reprocess', 'POST', '/api/v1/ext/files/999/reprocess', {}, 404, 'not_found'],
    ['agent without a name', 'POST', '/api/v1/ext/agents/', { config: {} }, 400, 'invalid_request'],
  ] as const)('%s', async (_label, method, path, json, status, code) => {
    const api = apiFor(h, { plan: 'pro', credits: 50 });

    const res = await api.call(method, path, { json });

    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(await credits(api)).toBe(50);
  });

  it('402 insufficient_credits writes nothing', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 4 });

    const agent = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'too expensive' } });
    const file = await upload(api, 'a.txt', 'hello');
    const agents = await api.call('GET', '/api/v1/ext/agents/');
    const files = await api.call('GET', '/api/v1/ext/files/');

    expect(agent.status).toBe(402);
    expect(agent.body.error.code).toBe('insufficient_credits');
    expect(file.status).toBe(402);
    expect(agents.body.agents).toEqual([]);
    expect(files.body).toEqual({ files: [], total: 0 });
    expect(await credits(api)).toBe(4);
  });

  it('402 after streaming when the size makes the upload cost more than the balance', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 6 });

    const res = await upload(api, 'big.xml', Buffer.alloc(7 * 1_048_576, 'b'));
    const files = await api.call('GET', '/api/v1/ext/files/');

    expect(res.status).toBe(402);
    expect(files.body.total).toBe(0);
    expect(await credits(api)).toBe(6);
  });

  it('a batch write is all-or-nothing on 402', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 7 });
    const agentId = await selfLearningAgent(api);

    const res = await api.call('POST', '/api/v2/ext/datasets/intelligence/batch', {
      json: { agent_id: agentId, entries: [{ content: 'one' }, { content: 'two' }, { content: 'three' }] },
    });
    const entries = await api.call('GET', '/api/v2/ext/datasets/intelligence');

    expect(res.status).toBe(402);
    expect(entries.body).toEqual({ entries: [], total: 0 });
    expect(await credits(api)).toBe(2);
  });

  it('a batch of only duplicates is free even at a zero balance', async () => {
    const api = apiFor(h, { plan: 'pro', credits: 6 });
    const agentId = await selfLearningAgent(api);
    await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agentId, content: 'known' } });

    const res = await api.call('POST', '/api/v2/ext/datasets/intelligence/batch', {
      json: { agent_id: agentId, entries: [{ content: 'known' }] },
    });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 0, duplicates: 1, credits_charged: 0 });
    expect(await credits(api)).toBe(0);
  });
});

describe('tier gates', () => {
  it.each(['free', 'basic'] as const)('%s plan: batch query, batch intelligence and reindex answer 403 tier_required', async (plan) => {
    const api = apiFor(h, { plan, credits: 100 });

    const responses = await Promise.all([
      api.call('POST', '/api/v1/ext/datasets/query/batch', { json: { queries: ['a'] } }),
      api.call('POST', '/api/v2/ext/datasets/intelligence/batch', { json: { agent_id: 1, entries: [{ content: 'x' }] } }),
      api.call('POST', '/api/v1/ext/datasets/reindex', { json: {} }),
    ]);

    expect(responses.map((r) => [r.status, r.body.error.code])).toEqual([
      [403, 'tier_required'],
      [403, 'tier_required'],
      [403, 'tier_required'],
    ]);
    expect(await credits(api)).toBe(100);
  });

  it('basic plan may still query', async () => {
    const api = apiFor(h, { plan: 'basic', credits: 10 });

    const res = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'anything', top_k: 20 } });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [] });
  });
});

describe('rate limit', () => {
  it('answers 429 rate_limited with Retry-After past N requests per minute per key', async () => {
    let now = 1_700_000_000_000;
    const limited = await startHarness({ rateLimitPerMin: 3, clock: () => now });
    try {
      const api = apiFor(limited, { credits: 10 });
      const other = apiFor(limited, { credits: 10 });

      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await api.call('GET', '/api/v1/ext/files/')).status);
      const refused = await api.call('GET', '/api/v1/ext/files/');
      const otherKey = await other.call('GET', '/api/v1/ext/files/');
      now += 20_000;
      const later = await api.call('GET', '/api/v1/ext/files/');

      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBe(20);
      expect(otherKey.status).toBe(200);
      expect(later.status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
