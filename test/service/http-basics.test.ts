import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TABLE } from '../../src/cli/error-table.js';
import { STATUS_OF } from '../../src/service/service-error.js';
import { apiFor, send, startHarness, type Api, type Harness } from './helpers.js';

/** docs/api.md's error table, plus the pairs docs/service.md adds (405). */
const DOCUMENTED_PAIRS = [
  '400 invalid_request',
  '401 unauthorized',
  '402 insufficient_credits',
  '403 tier_required',
  '403 mode_forbidden',
  '403 forbidden',
  '404 not_found',
  '405 method_not_allowed',
  '409 limit_reached',
  '409 idempotency_in_progress',
  '413 file_too_large',
  '415 unsupported_file_type',
  '422 validation_failed',
  '422 idempotency_mismatch',
  '429 rate_limited',
  '500 internal',
];

let h: Harness;
let api: Api;

beforeAll(async () => {
  h = await startHarness();
  api = apiFor(h, { plan: 'pro', credits: 100 });
});
afterAll(async () => {
  await h.close();
});

/** Writes `request` as it is on a new connection to the service; everything it answers until the connection ends. */
function rawRequest(request: string): Promise<string> {
  const { port } = new URL(h.service.url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text)).on('error', reject);
  });
}

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

  it('answers 405 method_not_allowed (a documented code with an exit code) with Allow for a known path and a wrong method', async () => {
    const res = await api.call('DELETE', '/api/v1/ext/agents/');

    expect(res.status).toBe(405);
    expect(res.headers['allow']).toContain('GET');
    expect(res.headers['allow']).toContain('POST');
    expect(res.body.error.code).toBe('method_not_allowed');
    expect(STATUS_OF.method_not_allowed).toBe(405);
    expect(ERROR_TABLE.method_not_allowed.exit).toBe(1);
  });

  it('rejects malformed JSON with 400 invalid_request', async () => {
    const res = await api.call('POST', '/api/v1/ext/datasets/query', {
      body: '{"query": ',
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'malformed JSON body' });
  });

  it('rejects a __proto__ key with 400', async () => {
    const res = await api.call('PUT', '/api/v1/ext/agents/1/config', {
      body: '{"config": {"__proto__": {"polluted": true}}}',
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('__proto__');
  });

  it.each([
    ['a JSON route', '/api/v1/ext/datasets/query', 'text/plain', 'application/json'],
    ['a JSON route', '/api/v1/ext/datasets/query', 'application/x-www-form-urlencoded', 'application/json'],
    ['the upload route', '/api/v1/ext/files/upload', 'text/plain', 'multipart/form-data'],
    ['the upload route', '/api/v1/ext/files/upload', 'application/json', 'multipart/form-data'],
  ])('a wrong Content-Type on %s (%s, sent %s) is a 400 invalid_request naming %s', async (_route, path, contentType, expected) => {
    const res = await api.call('POST', path, { body: 'query=x', headers: { 'content-type': contentType } });

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(expected);
  });

  it('rejects a JSON body over 1 MiB with 400 invalid_request (not 413, which means file_too_large) and stays up', async () => {
    const huge = JSON.stringify({ query: 'x'.repeat(1_100_000) });

    const res = await api.call('POST', '/api/v1/ext/datasets/query', { body: huge, headers: { 'content-type': 'application/json' } });
    const after = await api.call('GET', '/api/v1/ext/datasets/');

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'JSON body over 1048576 bytes' });
    expect(after.status).toBe(200);
  });

  it('answers every error with a status/code pair documented in docs/api.md or docs/service.md', async () => {
    const answers = await Promise.all([
      api.call('POST', '/api/v1/ext/datasets/query', { body: '{', headers: { 'content-type': 'application/json' } }),
      api.call('POST', '/api/v1/ext/datasets/query', { body: 'x', headers: { 'content-type': 'text/plain' } }),
      api.call('POST', '/api/v1/ext/datasets/query', {
        body: JSON.stringify({ query: 'x'.repeat(1_100_000) }),
        headers: { 'content-type': 'application/json' },
      }),
      api.call('POST', '/api/v1/ext/files/upload', { body: 'x', headers: { 'content-type': 'text/plain' } }),
      api.call('POST', '/api/v1/ext/files/upload', { json: {} }),
      api.call('DELETE', '/api/v2/ext/webhooks'),
      api.call('GET', '/nope'),
      api.call('GET', '/api/v1/ext/datasets/', { noAuth: true }),
      api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'x', top_k: 21 } }),
    ]);

    for (const res of answers) expect(DOCUMENTED_PAIRS, JSON.stringify(res.body)).toContain(`${res.status} ${res.body.error.code}`);
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

  it('answers a path parameter that is not valid percent-encoding with 400 invalid_request', async () => {
    const res = await api.call('GET', '/api/v1/ext/agents/%E0%A4%A');

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain('malformed URL');
  });

  it('answers a JSON body sent without a Content-Type with 400 naming application/json', async () => {
    const res = await send(`${h.service.url}/api/v1/ext/datasets/query`, 'POST', { 'x-api-key': api.key }, '{"query":"x"}');

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'Content-Type must be application/json (got none)' });
  });

  it('answers a request the HTTP parser refuses with a JSON 400, then closes the connection', async () => {
    const [head = '', body = ''] = (await rawRequest('GET /api/v1/ext/datasets/ HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n')).split(
      '\r\n\r\n',
    );

    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body)).toEqual({ error: { code: 'invalid_request', message: 'malformed HTTP request' } });
  });
});

describe('HTTP', () => {
  it('routes a request target in absolute form (as a proxy sends it) like its path', async () => {
    const response = await rawRequest(
      `GET ${h.service.url}/api/v1/ext/datasets/?x=1 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${api.key}\r\nConnection: close\r\n\r\n`,
    );
    const [head = '', body = ''] = response.split('\r\n\r\n');

    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(body).datasets[0].id).toBe(Number(api.datasetId));
  });

  it('answers HEAD on a GET route with its status and headers, and no body', async () => {
    const url = `${h.service.url}/api/v1/ext/datasets/`;
    const [get, head] = await Promise.all([send(url, 'GET', { 'x-api-key': api.key }), send(url, 'HEAD', { 'x-api-key': api.key })]);

    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
  });

  it('answers HEAD on a path served with POST only with 405 and Allow; OPTIONS stays a 404', async () => {
    const url = `${h.service.url}/api/v1/ext/datasets/query`;
    const [head, options] = await Promise.all([
      send(url, 'HEAD', { 'x-api-key': api.key }),
      send(url, 'OPTIONS', { 'x-api-key': api.key }),
    ]);

    expect(head.status).toBe(405);
    expect(head.headers['allow']).toBe('POST');
    expect(options.status).toBe(404);
  });

  it('keeps the connection of a request without a body open after an error answered at once (404, 401, 405)', async () => {
    const answers = await Promise.all([
      send(`${h.service.url}/api/v1/ext/nope`, 'GET', { 'x-api-key': api.key }),
      send(`${h.service.url}/api/v1/ext/files/`, 'GET', { 'x-api-key': 'kbs_not-a-real-key' }),
      send(`${h.service.url}/api/v1/ext/files/`, 'DELETE', { 'x-api-key': api.key }),
    ]);

    expect(answers.map((a) => a.status)).toEqual([404, 401, 405]);
    for (const a of answers) expect(a.headers['connection']).toBe('keep-alive');
  });

  it('keeps idle connections open 72 s (longer than clients keep theirs), and says so', async () => {
    const res = await api.call('GET', '/api/v1/ext/datasets/');

    expect(res.headers['keep-alive']).toBe('timeout=72');
  });

  it('answers a repeated limit or offset with a 400 naming it', async () => {
    const res = await api.call('GET', '/api/v1/ext/files/?limit=1&limit=2');

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'limit: give it at most once' });
  });

  it('reads a repeated query parameter as given twice: dataset_id twice is a 400', async () => {
    const res = await api.call('GET', `/api/v1/ext/files/?dataset_id=${api.datasetId}&dataset_id=${api.datasetId}`);

    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('dataset_id: give it at most once');
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

  it("ignores dataset_id equal to the key's dataset and answers 404 for another", async () => {
    const same = await api.call('GET', `/api/v1/ext/datasets/?dataset_id=${api.datasetId}`);
    const other = await api.call('GET', '/api/v1/ext/datasets/?dataset_id=999999');

    expect(same.status).toBe(200);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
  });

  it.each([
    ['the same value twice', (id: string) => `dataset_id=${id}&dataset_id=${id}`],
    ['two values', (id: string) => `dataset_id=${id}&dataset_id=999999`],
  ])('answers 400 invalid_request for a repeated dataset_id (%s)', async (_label, query) => {
    const res = await api.call('GET', `/api/v1/ext/datasets/?${query(api.datasetId)}`);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain('dataset_id');
  });
});

describe('paths', () => {
  it.each([
    '/api/v1/ext/datasets',
    '/api/v1/ext/datasets/',
    '/api/v1/ext/agents',
    '/api/v1/ext/agents/',
    '/api/v1/ext/files',
    '/api/v1/ext/files/',
    '/api/v2/ext/webhooks',
    '/api/v2/ext/webhooks/',
    '/api/v2/ext/datasets/intelligence',
    '/api/v2/ext/datasets/intelligence/',
  ])('GET %s works', async (path) => {
    const res = await api.call('GET', path);

    expect(res.status).toBe(200);
  });

  it('lists the dataset with its fields', async () => {
    const res = await api.call('GET', '/api/v1/ext/datasets/');

    expect(res.body).toEqual({
      datasets: [
        {
          id: Number(api.datasetId),
          name: 'test',
          description: '',
          plan: 'pro',
          credits_remaining: 100,
          knowledge_source_count: 0,
          created_at: expect.any(String),
        },
      ],
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

describe('request bodies: strict where a typo would silently do nothing, lenient elsewhere', () => {
  it.each([
    ['PUT dataset', 'PUT', () => '/api/v2/ext/datasets', { nme: 'x' }, 'nme'],
    ['PUT dataset (a known field next to a typo)', 'PUT', () => '/api/v2/ext/datasets', { name: 'ok', descripton: 'x' }, 'descripton'],
    [
      'PUT agent config wrapper',
      'PUT',
      (agent: number) => `/api/v1/ext/agents/${agent}/config`,
      { config: { top_k: 3 }, system_prompt: 'x' },
      'system_prompt',
    ],
    [
      'PATCH dataset mode',
      'PATCH',
      (agent: number, dataset: string) => `/api/v2/ext/agents/${agent}/datasets/${dataset}`,
      { mode: 'self_learning', moed: 'read_only' },
      'moed',
    ],
    ['POST webhook', 'POST', () => '/api/v2/ext/webhooks', { url: 'https://example.com/hook', evnts: ['webhook.test'] }, 'evnts'],
  ] as const)('%s: an unknown field is a 400 invalid_request naming it, and changes nothing', async (_label, method, path, json, field) => {
    const caller = apiFor(h, { plan: 'pro', credits: 100 });
    const agent = (await caller.call('POST', '/api/v1/ext/agents/', { json: { name: 'strict' } })).body.id as number;
    const before = await caller.call('GET', `/api/v1/ext/agents/${agent}`);

    const res = await caller.call(method, path(agent, caller.datasetId), { json });

    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: `${field}: unknown field` });
    expect((await caller.call('GET', '/api/v1/ext/datasets/')).body.datasets[0]).toMatchObject({
      name: 'test',
      description: '',
      credits_remaining: 95,
    });
    expect((await caller.call('GET', `/api/v1/ext/agents/${agent}`)).body).toEqual(before.body);
    expect((await caller.call('GET', '/api/v2/ext/webhooks')).body.webhooks).toEqual([]);
  });

  it.each([
    ['POST query', '/api/v1/ext/datasets/query', { query: 'x', top_k: 3, client_trace: 'abc' }, 200],
    ['POST agent', '/api/v1/ext/agents/', { name: 'lenient', description: 'a field the hosted service may know' }, 201],
  ])('%s: an unknown field is ignored', async (_label, path, json, status) => {
    const res = await api.call('POST', path, { json });

    expect(res.status).toBe(status);
  });

  it('the agent config itself keeps unknown keys (it is free-form)', async () => {
    const agent = (await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'free-form' } })).body.id as number;

    const res = await api.call('PUT', `/api/v1/ext/agents/${agent}/config`, { json: { config: { top_k: 2, model: 'tiny' } } });

    expect(res.status).toBe(200);
    expect(res.body.config).toEqual({ top_k: 2, model: 'tiny' });
  });
});
