import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_BODY_LIMIT } from '../../../src/service/http/limits.js';
import { apiFor, startHarness, type Api, type Harness } from '../helpers.js';
import { httpRequest, portOf, rawConnect } from './raw-http.js';

// Request bodies: their framing (Content-Length, chunked, 100-continue), the JSON limit, and a body no route reads.
let h: Harness;
let api: Api;
let port: number;
const LIST = '/api/v1/ext/datasets/';
const UPDATE = '/api/v2/ext/datasets';

beforeAll(async () => {
  h = await startHarness();
  api = apiFor(h, { plan: 'pro', credits: 100 });
  port = portOf(h.service.url);
});
afterAll(async () => {
  await h.close();
});

const json = () => ({ 'x-api-key': api.key, 'content-type': 'application/json' });
/** `{"name": name}` padded with spaces to exactly `bytes` bytes. */
const padded = (name: string, bytes: number): string => {
  const text = JSON.stringify({ name });
  return text + ' '.repeat(bytes - text.length);
};
/** `text` as a chunked body in pieces of `size` bytes, with its last chunk. */
const chunked = (text: string, size: number): string => {
  let out = '';
  for (let at = 0; at < text.length; at += size) {
    const piece = text.slice(at, at + size);
    out += `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`;
  }
  return `${out}0\r\n\r\n`;
};

describe('JSON bodies and their limit', () => {
  it('takes a body of exactly the limit, and refuses one byte more with a 400 naming the limit; the connection goes on', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('PUT', UPDATE, json(), padded('at the limit', JSON_BODY_LIMIT)));
    const atLimit = await c.response();
    expect([atLimit.status, atLimit.json.name]).toEqual([200, 'at the limit']);

    await c.write(httpRequest('PUT', UPDATE, json(), padded('over the limit', JSON_BODY_LIMIT + 1)));
    const over = await c.response();
    expect(over.status).toBe(400);
    expect(over.json.error).toEqual({ code: 'invalid_request', message: `JSON body over ${JSON_BODY_LIMIT} bytes` });
    // The refused body was read past, not taken for the next request.
    await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    const after = await c.response();
    expect((after.json.datasets as { name: string }[])[0]?.name).toBe('at the limit');
    c.destroy();
  });

  it('reads a chunked body (no Content-Length) as one, and refuses a chunked body past the limit', async () => {
    const c = await rawConnect(port);
    const body = JSON.stringify({ name: 'sent in chunks', description: 'x'.repeat(5000) });
    await c.write(httpRequest('PUT', UPDATE, { ...json(), 'transfer-encoding': 'chunked' }, chunked(body, 333)));
    const r = await c.response();
    expect([r.status, r.json.name]).toEqual([200, 'sent in chunks']);

    await c.write(
      httpRequest('PUT', UPDATE, { ...json(), 'transfer-encoding': 'chunked' }, chunked(padded('too big', JSON_BODY_LIMIT + 10), 65_536)),
    );
    const over = await c.response();
    expect([over.status, over.json.error?.code]).toEqual([400, 'invalid_request']);
    c.destroy();
  });

  it('answers Expect: 100-continue with 100 Continue, then the answer to the body sent after it', async () => {
    const c = await rawConnect(port);
    const body = JSON.stringify({ name: 'after continue' });
    await c.write(httpRequest('PUT', UPDATE, { ...json(), expect: '100-continue', 'content-length': String(body.length) }));
    const interim = await c.response();
    expect(interim.status).toBe(100);
    await c.write(body);
    const r = await c.response();
    expect([r.status, r.json.name]).toEqual([200, 'after continue']);
    c.destroy();
  });

  it('refuses a JSON route body of another media type with a 400 naming application/json', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('PUT', UPDATE, { 'x-api-key': api.key, 'content-type': 'text/plain' }, '{"name":"x"}'));
    const r = await c.response();
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toMatch(/application\/json/);
    c.destroy();
  });

  it('reads an empty body (Content-Length: 0) as no body, not as malformed JSON', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('POST', '/api/v1/ext/datasets/query', { ...json(), 'content-length': '0' }));
    const r = await c.response();
    expect(r.status).not.toBe(500);
    expect(r.json.error?.message).not.toBe('malformed JSON body');
    c.destroy();
  });

  it('ignores the body of a GET, and does not read it as the next request', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key, 'content-type': 'application/json' }, 'GET /smuggled HTTP/1.1\r\n\r\n'));
    expect((await c.response()).status).toBe(200);
    await c.write(httpRequest('GET', '/api/v1/ext/files/', { 'x-api-key': api.key }));
    const next = await c.response();
    expect(next.status).toBe(200);
    expect(next.json.files).toBeInstanceOf(Array);
    c.destroy();
  });
});

describe('request heads', () => {
  it('refuses a head past node’s header limit with a JSON 400 saying so, and stays up', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('GET', `${LIST}?q=${'a'.repeat(70_000)}`, { 'x-api-key': api.key }));
    const r = await c.response();
    expect(r.status).toBe(400);
    expect(r.json.error).toEqual({ code: 'invalid_request', message: 'request headers too large' });
    const d = await rawConnect(port);
    await d.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    expect((await d.response()).status).toBe(200);
    d.destroy();
  });
});
