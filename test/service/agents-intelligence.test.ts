import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { verifyWebhook } from '../../src/client/webhook-verify.js';
import { createLogger } from '../../src/shared/logger.js';
import { sha256Hex } from '../../src/shared/sha256.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { apiFor, credits, eventually, startHarness, type Api, type Harness } from './helpers.js';

let h: Harness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  h = await startHarness({ allowInsecureWebhooks: true });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

async function createAgent(api: Api, name = 'helper', config: Record<string, unknown> = {}): Promise<number> {
  const res = await api.call('POST', '/api/v1/ext/agents/', { json: { name, config } });
  expect(res.status).toBe(201);
  return res.body.id as number;
}

function eventsOfType(type: string) {
  return receiver.received
    .map((d) => ({ d, body: JSON.parse(d.body) as { type: string; data: Record<string, unknown> } }))
    .filter((e) => e.body.type === type);
}

describe('agents', () => {
  it('create, get with datasets, list, update config', async () => {
    const api = apiFor(h);

    const created = await api.call('POST', '/api/v1/ext/agents/', {
      json: { name: 'Helper', config: { system_prompt: 'Be brief', top_k: 3 } },
    });
    const got = await api.call('GET', `/api/v1/ext/agents/${created.body.id}`);
    const listed = await api.call('GET', '/api/v1/ext/agents');
    const updated = await api.call('PUT', `/api/v1/ext/agents/${created.body.id}/config`, { json: { config: { temperature: 0.5 } } });

    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'Helper',
      config: { system_prompt: 'Be brief', top_k: 3 },
      created_at: expect.any(String),
    });
    expect(got.body).toEqual({ ...created.body, datasets: [{ id: Number(api.datasetId), mode: 'read_only' }] });
    expect(listed.body).toEqual({ agents: [created.body] });
    expect(updated.body).toMatchObject({ id: created.body.id, config: { temperature: 0.5 } });
  });

  it('validates config: 400 on wrong types, 422 on top_k over 20, nothing charged', async () => {
    const api = apiFor(h, { credits: 50 });
    const id = await createAgent(api);

    const wrongType = await api.call('PUT', `/api/v1/ext/agents/${id}/config`, { json: { config: { temperature: 'hot' } } });
    const tooMany = await api.call('PUT', `/api/v1/ext/agents/${id}/config`, { json: { config: { top_k: 50 } } });
    const notObject = await api.call('PUT', `/api/v1/ext/agents/${id}/config`, { json: { config: [1] } });

    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain('config.temperature');
    expect(tooMany.status).toBe(422);
    expect(notObject.status).toBe(400);
    expect(await credits(api)).toBe(45);
  });

  it('chat answers from the dataset with sources', async () => {
    const api = apiFor(h);
    const agentId = await createAgent(api);
    await api.call('PATCH', `/api/v2/ext/agents/${agentId}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
    const entry = await api.call('POST', '/api/v2/ext/datasets/intelligence', {
      json: { agent_id: agentId, content: 'The office wifi password rotates every Monday.' },
    });
    await eventually(async () => {
      const list = await api.call('GET', '/api/v2/ext/datasets/intelligence');
      return list.body.entries[0].status === 'processed' ? true : undefined;
    });

    const chat = await api.call('POST', `/api/v1/ext/agents/${agentId}/chat`, { json: { message: 'When does the wifi password rotate?' } });
    const empty = await api.call('POST', `/api/v1/ext/agents/${agentId}/chat`, { json: { message: '' } });

    expect(chat.status).toBe(200);
    expect(chat.body.response).toEqual(expect.any(String));
    expect(chat.body.sources[0]).toMatchObject({
      knowledge_source_id: entry.body.id,
      chunk_index: 0,
      text: expect.stringContaining('Monday'),
    });
    expect(empty.status).toBe(400);
  });

  it('chat through an unreachable LLM answers 502, costs nothing, and logs the failure (never the key)', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        lines.push(chunk.toString());
        done();
      },
    });
    const other = await startHarness({ llmUrl: 'http://127.0.0.1:1/v1', logger: createLogger({ level: 'error' }, sink) });
    try {
      const api = apiFor(other, { credits: 20 });
      const agentId = await createAgent(api);

      const res = await api.call('POST', `/api/v1/ext/agents/${agentId}/chat`, { json: { message: 'hello' } });

      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('internal');
      expect(res.text).not.toContain('127.0.0.1:1');
      expect(await credits(api)).toBe(15);
      const logged = lines.map((l) => JSON.parse(l) as { msg: string; method: string; route: string });
      expect(logged).toEqual([expect.objectContaining({ msg: 'request failed', method: 'POST', route: '/api/v1/ext/agents/:agent/chat' })]);
      expect(lines.join('')).not.toContain(api.key);
    } finally {
      await other.close();
    }
  });
});

describe('agent-dataset modes and intelligence', () => {
  it('writes need self_learning: 403 mode_forbidden on read_only, nothing charged', async () => {
    const api = apiFor(h, { credits: 20 });
    const agentId = await createAgent(api);

    const res = await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agentId, content: 'x' } });

    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('mode_forbidden');
    expect(await credits(api)).toBe(15);
  });

  it('list / attach / PATCH mode, emitting dataset.mode_changed with previous_mode (signed)', async () => {
    const api = apiFor(h);
    const hook = await api.call('POST', '/api/v2/ext/webhooks', { json: { url: receiver.url, events: ['dataset.mode_changed'] } });
    const agentId = await createAgent(api);

    const listed = await api.call('GET', `/api/v2/ext/agents/${agentId}/datasets`);
    const attachAgain = await api.call('POST', `/api/v2/ext/agents/${agentId}/datasets`, { json: { dataset_id: api.datasetId } });
    const attachOther = await api.call('POST', `/api/v2/ext/agents/${agentId}/datasets`, { json: { dataset_id: 999999 } });
    const patched = await api.call('PATCH', `/api/v2/ext/agents/${agentId}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
    const badMode = await api.call('PATCH', `/api/v2/ext/agents/${agentId}/datasets/${api.datasetId}`, { json: { mode: 'write_all' } });
    const otherDataset = await api.call('PATCH', `/api/v2/ext/agents/${agentId}/datasets/999999`, { json: { mode: 'read_only' } });
    const event = await eventually(async () => eventsOfType('dataset.mode_changed').find((e) => e.body.data['agent_id'] === agentId));

    expect(listed.body).toEqual({ datasets: [{ id: Number(api.datasetId), name: 'test', mode: 'read_only' }] });
    expect(attachAgain.status).toBe(200);
    expect(attachAgain.body).toEqual({ id: Number(api.datasetId), mode: 'read_only' });
    expect(attachOther.status).toBe(404);
    expect(patched.body).toEqual({ id: Number(api.datasetId), mode: 'self_learning' });
    expect(badMode.status).toBe(400);
    expect(otherDataset.status).toBe(404);
    expect(event.body.data).toEqual({
      agent_id: agentId,
      dataset_id: Number(api.datasetId),
      mode: 'self_learning',
      previous_mode: 'read_only',
    });
    expect(verifyWebhook({ headers: event.d.headers, body: event.d.body, secret: hook.body.secret as string }).ok).toBe(true);
  });

  it('single write, dedup (free, 200 with the existing entry), processed and searchable, with events', async () => {
    const api = apiFor(h, { credits: 100 });
    await api.call('POST', '/api/v2/ext/webhooks', { json: { url: receiver.url } });
    const agentId = await createAgent(api);
    await api.call('PATCH', `/api/v2/ext/agents/${agentId}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
    const content = 'Deploys happen on Tuesdays after the standup.';

    const first = await api.call('POST', '/api/v2/ext/datasets/intelligence', {
      json: { agent_id: String(agentId), content, title: 'Deploys', metadata: { source: 'chat' } },
    });
    const dup = await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agentId, content } });
    const processedEvent = await eventually(async () =>
      eventsOfType('intelligence.processed').find((e) => e.body.data['entry_id'] === first.body.id),
    );
    const dedupEvent = await eventually(async () =>
      eventsOfType('intelligence.deduped').find((e) => e.body.data['entry_id'] === first.body.id),
    );
    const hits = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'when are deploys' } });
    const list = await api.call('GET', '/api/v2/ext/datasets/intelligence?limit=10');

    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.any(Number),
      sha256: sha256Hex(content),
      status: 'pending',
      duplicate: false,
      credits_charged: 1,
    });
    expect(dup.status).toBe(200);
    expect(dup.body).toMatchObject({ id: first.body.id, sha256: sha256Hex(content), duplicate: true, credits_charged: 0 });
    expect(processedEvent.body.data).toEqual({
      entry_id: first.body.id,
      dataset_id: Number(api.datasetId),
      agent_id: agentId,
      sha256: sha256Hex(content),
    });
    expect(dedupEvent.body.data).toMatchObject({ entry_id: first.body.id, agent_id: agentId });
    expect(hits.body.results[0]).toMatchObject({ knowledge_source_id: first.body.id, text: expect.stringContaining('Tuesdays') });
    expect(list.body).toEqual({
      total: 1,
      entries: [
        {
          id: first.body.id,
          agent_id: agentId,
          title: 'Deploys',
          sha256: sha256Hex(content),
          status: 'processed',
          error: null,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      ],
    });
    expect(await credits(api)).toBe(100 - 5 - 1 - 1); // agent, entry, query
  });

  it('batch: new entries charged, duplicates (also within the batch) free; 422 over 50; 400 when empty', async () => {
    const api = apiFor(h, { credits: 100 });
    const agentId = await createAgent(api);
    await api.call('PATCH', `/api/v2/ext/agents/${agentId}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
    await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agentId, content: 'old' } });

    const batch = await api.call('POST', '/api/v2/ext/datasets/intelligence/batch', {
      json: {
        agent_id: agentId,
        entries: [{ content: 'old' }, { content: 'new 1' }, { content: 'new 2', title: 't' }, { content: 'new 1' }],
      },
    });
    const tooMany = await api.call('POST', '/api/v2/ext/datasets/intelligence/batch', {
      json: { agent_id: agentId, entries: Array.from({ length: 51 }, (_, i) => ({ content: `e${i}` })) },
    });
    const empty = await api.call('POST', '/api/v2/ext/datasets/intelligence/batch', { json: { agent_id: agentId, entries: [] } });

    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ created: 2, duplicates: 2, credits_charged: 2 });
    expect(batch.body.results.map((r: { duplicate: boolean; credits_charged: number }) => [r.duplicate, r.credits_charged])).toEqual([
      [true, 0],
      [false, 1],
      [false, 1],
      [true, 0],
    ]);
    expect(batch.body.results[3].id).toBe(batch.body.results[1].id);
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.code).toBe('validation_failed');
    expect(empty.status).toBe(400);
    expect(await credits(api)).toBe(100 - 5 - 1 - 2);
  });
});

describe('webhooks', () => {
  it('register (secret once), list without secret, test delivers now', async () => {
    const api = apiFor(h);

    const created = await api.call('POST', '/api/v2/ext/webhooks', { json: { url: receiver.url, events: ['intelligence.failed'] } });
    const listed = await api.call('GET', '/api/v2/ext/webhooks');
    const before = receiver.received.length;
    const tested = await api.call('POST', `/api/v2/ext/webhooks/${created.body.id}/test`);
    const delivery = receiver.received[before];

    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      url: receiver.url,
      events: ['intelligence.failed'],
      secret: expect.stringMatching(/^whsec_/),
      created_at: expect.any(String),
    });
    expect(listed.body).toEqual({
      webhooks: [{ id: created.body.id, url: receiver.url, events: ['intelligence.failed'], created_at: created.body.created_at }],
    });
    expect(listed.text).not.toContain('whsec_');
    expect(tested.body).toEqual({ delivered: true, status: 200 });
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({ type: 'webhook.test', data: { webhook_id: created.body.id } });
  });

  it('422 for a non-HTTPS URL without the insecure flag; 409 for an 11th; 404 for an unknown id', async () => {
    const strict = await startHarness();
    try {
      const api = apiFor(strict);
      const plain = await api.call('POST', '/api/v2/ext/webhooks', { json: { url: 'http://127.0.0.1:9/hook' } });
      const noUrl = await api.call('POST', '/api/v2/ext/webhooks', { json: {} });
      for (let i = 0; i < 10; i++) {
        expect((await api.call('POST', '/api/v2/ext/webhooks', { json: { url: `https://example.com/hook/${i}` } })).status).toBe(201);
      }
      const eleventh = await api.call('POST', '/api/v2/ext/webhooks', { json: { url: 'https://example.com/hook/11' } });
      const unknown = await api.call('POST', '/api/v2/ext/webhooks/9999/test');

      expect(plain.status).toBe(422);
      expect(plain.body.error.code).toBe('validation_failed');
      expect(noUrl.status).toBe(400);
      expect(eleventh.status).toBe(409);
      expect(eleventh.body.error.code).toBe('limit_reached');
      expect(unknown.status).toBe(404);
    } finally {
      await strict.close();
    }
  });
});
