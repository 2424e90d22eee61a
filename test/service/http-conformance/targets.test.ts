import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, newAgent, startHarness, type Api, type Harness } from '../helpers.js';
import { httpRequest, portOf, rawConnect, type RawResponse } from './raw-http.js';

// Request targets (RFC 9112 3.2): origin form, absolute form (what a proxy sends), asterisk form, and percent-encoding.
let h: Harness;
let api: Api;
let port: number;
let agentId: number;

beforeAll(async () => {
  h = await startHarness();
  api = apiFor(h, { plan: 'pro', credits: 100 });
  port = portOf(h.service.url);
  agentId = await newAgent(api, 'read_only');
});
afterAll(async () => {
  await h.close();
});

async function get(target: string, method = 'GET'): Promise<RawResponse> {
  const c = await rawConnect(port);
  try {
    await c.write(httpRequest(method, target, { 'x-api-key': api.key }));
    return await c.response({ head: method === 'HEAD' });
  } finally {
    c.destroy();
  }
}

describe('request targets', () => {
  it('routes the absolute form like its path, with its query, on the v1 alias too', async () => {
    const origin = await get('/api/v1/ext/datasets/');
    for (const target of [
      'http://kbsync.test/api/v1/ext/datasets/',
      'http://kbsync.test:8080/api/v1/ext/datasets/?dataset_id=' + api.datasetId,
      'http://kbsync.test/api/platform/ext/datasets/',
    ]) {
      const r = await get(target);
      expect([target, r.status, r.text]).toEqual([target, 200, origin.text]);
    }
    expect((await get(`http://kbsync.test/api/v1/ext/agents/${agentId}`)).json.id).toBe(agentId);
  });

  it('answers the asterisk form with a JSON 404, and a target that is neither path nor URL with a JSON 400', async () => {
    const asterisk = await get('*', 'OPTIONS');
    expect([asterisk.status, asterisk.json.error?.code]).toEqual([404, 'not_found']);
    const neither = await get('kbsync.test/api/v1/ext/datasets/');
    expect([neither.status, neither.json.error?.code]).toEqual([400, 'invalid_request']);
  });
});

describe('percent-encoding', () => {
  it('decodes a path parameter: an id with its digits percent-encoded is the same agent', async () => {
    const encoded = [...String(agentId)].map((d) => `%${d.charCodeAt(0).toString(16)}`).join('');
    const r = await get(`/api/v1/ext/agents/${encoded}`);
    expect([r.status, r.json.id]).toEqual([200, agentId]);
  });

  it('refuses a parameter that is not valid percent-encoding with a 400, and never routes an encoded slash as a separator', async () => {
    const bad = await get('/api/v1/ext/agents/%zz');
    expect([bad.status, bad.json.error?.code]).toEqual([400, 'invalid_request']);
    const slash = await get(`/api/v1/ext/agents/${agentId}%2Fconfig`);
    expect([slash.status, slash.json.error?.code]).toEqual([404, 'not_found']);
  });

  it('decodes the query: an encoded key is the same parameter (given twice: a 400), an encoded value is its value', async () => {
    const twice = await get('/api/v1/ext/files/?li%6Dit=1&limit=2');
    expect(twice.status).toBe(400);
    expect(twice.json.error?.message).toMatch(/limit/);
    const encoded = await get(
      `/api/v1/ext/datasets/?dataset_id=${encodeURIComponent(api.datasetId).replace(/./g, (c) => `%${c.charCodeAt(0).toString(16)}`)}`,
    );
    expect(encoded.status).toBe(200);
    expect((encoded.json.datasets as { id: unknown }[]).length).toBe(1);
  });
});
