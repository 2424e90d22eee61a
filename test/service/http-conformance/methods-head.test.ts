import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, startHarness, type Api, type Harness } from '../helpers.js';
import { httpRequest, portOf, rawConnect } from './raw-http.js';

// What a framework guarantees about methods and HEAD, checked on the wire against the service's node:http layer.
let h: Harness;
let api: Api;
let port: number;
const LIST = '/api/v1/ext/datasets/';

beforeAll(async () => {
  h = await startHarness();
  api = apiFor(h, { plan: 'pro', credits: 100 });
  port = portOf(h.service.url);
});
afterAll(async () => {
  await h.close();
});

describe('methods', () => {
  it('answers each route only for its methods, and a known path with another method 405 with Allow', async () => {
    const c = await rawConnect(port);
    const auth = { 'x-api-key': api.key };
    await c.write(httpRequest('GET', LIST, auth));
    expect((await c.response()).status).toBe(200);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      await c.write(httpRequest(method, LIST, auth));
      const r = await c.response();
      expect([method, r.status, r.json.error?.code]).toEqual([method, 405, 'method_not_allowed']);
      // HEAD is served with every GET and left out of Allow, as the route table states.
      expect(r.headers.allow).toBe('GET');
    }
    c.destroy();
  });

  it('answers OPTIONS and other methods node knows but no route serves with a JSON 404 or 405, and keeps the connection', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('OPTIONS', LIST, { 'x-api-key': api.key }));
    const options = await c.response();
    expect([404, 405]).toContain(options.status);
    expect(options.headers['content-type']).toMatch(/^application\/json/);
    await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    expect((await c.response()).status).toBe(200);
    c.destroy();
  });

  it.each([
    ['an unknown method', 'BREW / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a lowercase method', 'get / HTTP/1.1\r\nHost: x\r\n\r\n'],
    [
      'both Content-Length and Transfer-Encoding (a smuggling attempt)',
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    ['a header line without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'],
  ])('refuses %s with a JSON 400, then closes the connection', async (_, request) => {
    const c = await rawConnect(port);
    await c.write(request);
    const r = await c.response();
    expect(r.status).toBe(400);
    expect(r.json.error?.code).toBe('invalid_request');
    expect(await c.closed()).toBe('');
  });

  it('refuses an HTTP/1.1 request without Host (RFC 9112 3.2) with a 400, then closes the connection', async () => {
    const c = await rawConnect(port);
    await c.write(`GET ${LIST} HTTP/1.1\r\nx-api-key: ${api.key}\r\n\r\n`);
    const r = await c.response();
    expect(r.status).toBe(400);
    expect(await c.closed()).toBe('');
  });
});

describe('HEAD', () => {
  it("answers HEAD on every GET route with the GET's status and headers, and no body: the next response on the connection reads clean", async () => {
    const c = await rawConnect(port);
    const auth = { 'x-api-key': api.key };
    for (const path of [LIST, '/api/v1/ext/files/', '/api/v1/ext/agents/', '/api/v2/ext/datasets/intelligence', '/api/v2/ext/webhooks']) {
      await c.write(httpRequest('GET', path, auth));
      const get = await c.response();
      await c.write(httpRequest('HEAD', path, auth));
      const head = await c.response({ head: true });
      expect([path, head.status, head.headers['content-type'], head.headers['content-length']]).toEqual([
        path,
        get.status,
        get.headers['content-type'],
        get.headers['content-length'],
      ]);
      expect(get.body.length).toBeGreaterThan(0);
    }
    // Were a HEAD answered with a body, its bytes would be read here as the next response's status line.
    await c.write(httpRequest('GET', LIST, auth));
    const after = await c.response();
    expect(after.status).toBe(200);
    expect(after.json.datasets).toBeInstanceOf(Array);
    c.destroy();
  });

  it('answers HEAD of an error (401, 404) with its status and no body', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('HEAD', LIST));
    expect((await c.response({ head: true })).status).toBe(401);
    await c.write(httpRequest('HEAD', '/api/v1/ext/nothing-here', { 'x-api-key': api.key }));
    const missing = await c.response({ head: true });
    expect(missing.status).toBe(404);
    expect(missing.body.length).toBe(0);
    await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    expect((await c.response()).status).toBe(200);
    c.destroy();
  });

  it('answers HEAD on a path served with POST only with 405 and Allow', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('HEAD', '/api/v1/ext/datasets/query', { 'x-api-key': api.key }));
    const r = await c.response({ head: true });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('POST');
    c.destroy();
  });
});
