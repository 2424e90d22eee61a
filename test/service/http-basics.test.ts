import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, send, startHarness, type Api, type Harness } from './helpers.js';

let h: Harness;
let api: Api;

beforeAll(async () => {
  h = await startHarness();
  api = apiFor(h, { plan: 'pro', credits: 100 });
});
afterAll(async () => {
  await h.close();
});

describe('errors are JSON for everything', () => {
  it.each([
    ['GET', '/nope'],
    ['GET', '/api/v1/ext/unknown'],
    ['POST', '/api/v3/ext/datasets/query'],
  ])('%s %s is a JSON 404 not_found', async (method, path) => {
    const res = await send(`${h.service.url}${path}`, method, { 'x-api-key': api.key });

    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.error.code).toBe('not_found');
  });

  it('answers 405 with Allow for a known path and a wrong method', async () => {
    const res = await api.call('DELETE', '/api/v1/ext/agents/');

    expect(res.status).toBe(405);
    expect(res.headers['allow']).toContain('GET');
    expect(res.headers['allow']).toContain('POST');
    expect(res.body.error.code).toBe('method_not_allowed');
  });

  it('rejects malformed JSON with 400 invalid_request', async () => {
    const res = await api.call('POST', '/api/v1/ext/datasets/query', { body: '{"query": ', headers: { 'content-type': 'application/json' } });

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'malformed JSON body' });
  });

  it('rejects a __proto__ key with 400', async () => {
    const res = await api.call('PUT', '/api/v1/ext/agents/1/config', { body: '{"config": {"__proto__": {"polluted": true}}}', headers: { 'content-type': 'application/json' } });

    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('__proto__');
  });

  it('rejects a wrong Content-Type with 415', async () => {
    const res = await api.call('POST', '/api/v1/ext/datasets/query', { body: 'query=x', headers: { 'content-type': 'text/plain' } });

    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it('rejects a body over 1 MB with 413 and stays up', async () => {
    const huge = JSON.stringify({ query: 'x'.repeat(1_100_000) });

    const res = await api.call('POST', '/api/v1/ext/datasets/query', { body: huge, headers: { 'content-type': 'application/json' } });
    const after = await api.call('GET', '/api/v1/ext/datasets/');

    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('invalid_request');
    expect(after.status).toBe(200);
  });

  it.each([
    [{ query: 5 }, 'query'],
    [{}, 'query'],
    [{ query: 'x', top_k: 'five' }, 'top_k'],
    [{ query: 'x', top_k: 0 }, 'top_k'],
    [{ query: 'x', top_k: 2.5 }, 'top_k'],
    [[1, 2], 'body'],
  ])('wrong types %j answer 400 naming %s', async (json, field) => {
    const res = await api.call('POST', '/api/v1/ext/datasets/query', { json });

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(field);
  });

  it('answers a 404 for a non-numeric id', async () => {
    const res = await api.call('GET', '/api/v1/ext/agents/abc');

    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('auth', () => {
  it('401 without a key and with an unknown key, without echoing it', async () => {
    const none = await api.call('GET', '/api/v1/ext/datasets/', { noAuth: true });
    const unknown = await api.call('GET', '/api/v1/ext/datasets/', { noAuth: true, headers: { 'x-api-key': 'kbs_not-a-real-key' } });

    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('unauthorized');
    expect(unknown.status).toBe(401);
    expect(unknown.text).not.toContain('not-a-real-key');
  });

  it('accepts Authorization: Bearer', async () => {
    const res = await api.call('GET', '/api/v1/ext/datasets/', { noAuth: true, headers: { authorization: `Bearer ${api.key}` } });

    expect(res.status).toBe(200);
  });

  it('ignores dataset_id equal to the key\'s dataset and answers 404 for another', async () => {
    const same = await api.call('GET', `/api/v1/ext/datasets/?dataset_id=${api.datasetId}`);
    const other = await api.call('GET', '/api/v1/ext/datasets/?dataset_id=999999');

    expect(same.status).toBe(200);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
  });
});

describe('paths', () => {
  it.each([
    '/api/v1/ext/datasets', '/api/v1/ext/datasets/', '/api/v1/ext/agents', '/api/v1/ext/agents/',
    '/api/v1/ext/files', '/api/v1/ext/files/', '/api/v2/ext/webhooks', '/api/v2/ext/webhooks/',
    '/api/v2/ext/datasets/intelligence', '/api/v2/ext/datasets/intelligence/',
  ])('GET %s works', async (path) => {
    const res = await api.call('GET', path);

    expect(res.status).toBe(200);
  });

  it('lists the dataset with its fields', async () => {
    const res = await api.call('GET', '/api/v1/ext/datasets/');

    expect(res.body).toEqual({
      datasets: [{
        id: Number(api.datasetId), name: 'test', description: '', plan: 'pro', credits_remaining: 100,
        knowledge_source_count: 0, created_at: expect.any(String),
      }],
      total: 1,
    });
  });

  it('updates the dataset name and description (PUT v2 datasets)', async () => {
    const res = await api.call('PUT', '/api/v2/ext/datasets', { json: { name: 'renamed', description: 'about' } });
    const bad = await api.call('PUT', '/api/v2/ext/datasets', { json: { name: 7 } });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: Number(api.datasetId), name: 'renamed', description: 'about' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('name');
  });
});
