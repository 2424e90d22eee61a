import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, startHarness, type Api, type Harness } from '../helpers.js';
import { httpRequest, portOf, rawConnect } from './raw-http.js';

// Persistent connections and pipelining (RFC 9112 9.3): several requests on one connection, answered in order.
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

describe('keep-alive', () => {
  it('answers many requests on one HTTP/1.1 connection and says how long it keeps it idle', async () => {
    const c = await rawConnect(port);
    for (let i = 0; i < 20; i++) {
      await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
      const r = await c.response();
      expect(r.status).toBe(200);
      expect(r.headers.connection).toBe('keep-alive');
      expect(r.headers['keep-alive']).toBe('timeout=72');
    }
    c.destroy();
  });

  it('closes the connection after answering a request that says Connection: close', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key, connection: 'close' }));
    const r = await c.response();
    expect(r.status).toBe(200);
    expect(r.headers.connection).toBe('close');
    expect(await c.closed()).toBe('');
  });

  it('closes an HTTP/1.0 connection after its answer unless it asks for keep-alive', async () => {
    const plain = await rawConnect(port);
    await plain.write(`GET ${LIST} HTTP/1.0\r\nx-api-key: ${api.key}\r\n\r\n`);
    expect((await plain.response()).status).toBe(200);
    expect(await plain.closed()).toBe('');

    const kept = await rawConnect(port);
    for (let i = 0; i < 2; i++) {
      await kept.write(`GET ${LIST} HTTP/1.0\r\nx-api-key: ${api.key}\r\nConnection: keep-alive\r\n\r\n`);
      const r = await kept.response();
      expect(r.status).toBe(200);
      expect(r.headers.connection?.toLowerCase()).toBe('keep-alive');
    }
    kept.destroy();
  });

  it('keeps the connection after errors answered without reading a body (401, 404, 405, 400)', async () => {
    const c = await rawConnect(port);
    const requests = [
      httpRequest('GET', LIST),
      httpRequest('GET', '/api/v1/ext/nothing', { 'x-api-key': api.key }),
      httpRequest('DELETE', LIST, { 'x-api-key': api.key }),
      httpRequest('PUT', '/api/v2/ext/datasets', { 'x-api-key': api.key, 'content-type': 'application/json' }, '{"name": '),
    ];
    const statuses: number[] = [];
    for (const request of requests) {
      await c.write(request);
      statuses.push((await c.response()).status);
    }
    await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    statuses.push((await c.response()).status);
    expect(statuses).toEqual([401, 404, 405, 400, 200]);
    c.destroy();
  });
});

describe('pipelining', () => {
  it('answers requests written at once, before any answer, each in the order asked', async () => {
    const c = await rawConnect(port);
    const auth = { 'x-api-key': api.key };
    await c.write(
      Buffer.concat([
        httpRequest('GET', '/api/v1/ext/files/', auth),
        httpRequest('PUT', '/api/v2/ext/datasets', { ...auth, 'content-type': 'application/json' }, JSON.stringify({ name: 'piped one' })),
        httpRequest('HEAD', LIST, auth),
        httpRequest('GET', '/api/v1/ext/nothing', auth),
        httpRequest('PUT', '/api/v2/ext/datasets', { ...auth, 'content-type': 'application/json' }, JSON.stringify({ name: 'piped two' })),
        httpRequest('GET', LIST, auth),
      ]),
    );
    const files = await c.response();
    const first = await c.response();
    const head = await c.response({ head: true });
    const missing = await c.response();
    const second = await c.response();
    const list = await c.response();
    expect(files.json.files).toBeInstanceOf(Array);
    expect(first.json.name).toBe('piped one');
    expect(head.status).toBe(200);
    expect(missing.status).toBe(404);
    expect(second.json.name).toBe('piped two');
    expect((list.json.datasets as { name: string }[]).map((d) => d.name)).toEqual(['piped two']);
    c.destroy();
  });

  it('answers pipelined requests up to one that asks to close, and none after it', async () => {
    const c = await rawConnect(port);
    const auth = { 'x-api-key': api.key };
    await c.write(
      Buffer.concat([
        httpRequest('GET', LIST, auth),
        httpRequest('GET', LIST, { ...auth, connection: 'close' }),
        httpRequest('GET', LIST, auth),
      ]),
    );
    expect((await c.response()).status).toBe(200);
    expect((await c.response()).headers.connection).toBe('close');
    expect(await c.closed()).toBe('');
  });

  it('answers a request split across writes at any byte, and one whose head and body come in one write with the next', async () => {
    const c = await rawConnect(port);
    const auth = { 'x-api-key': api.key, 'content-type': 'application/json' };
    const bytes = Buffer.concat([
      httpRequest('PUT', '/api/v2/ext/datasets', auth, JSON.stringify({ name: 'split' })),
      httpRequest('GET', LIST, { 'x-api-key': api.key }),
    ]);
    for (let at = 0; at < bytes.length; at += 7) await c.write(bytes.subarray(at, at + 7));
    expect((await c.response()).json.name).toBe('split');
    expect((await c.response()).status).toBe(200);
    c.destroy();
  });
});
