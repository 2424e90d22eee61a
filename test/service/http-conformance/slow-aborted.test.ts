import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiFor, startHarness, type Api, type Harness } from '../helpers.js';
import { httpRequest, portOf, rawConnect } from './raw-http.js';

// Clients that send slowly, stop half-way, or leave before their answer: the service answers the others and stays consistent.
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

/** Lets the service's event loop run between two writes (a client on a slow link). */
const pause = () => new Promise((r) => setTimeout(r, 5));
const json = () => ({ 'x-api-key': api.key, 'content-type': 'application/json' });
/** Files in the service's upload staging folders (files/tmp/INSTANCE/). */
const staged = (): string[] => {
  const root = join(h.dataDir, 'files', 'tmp');
  return readdirSync(root).flatMap((instance) => readdirSync(join(root, instance)));
};
/** A multipart upload of `content` as file `name`: the request's head (its Content-Length set) and its body. */
function upload(name: string, content: string): { head: Buffer; body: Buffer } {
  const boundary = 'conformance-boundary';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/markdown\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  );
  const head = httpRequest('POST', '/api/v1/ext/files/upload', {
    'x-api-key': api.key,
    'content-type': `multipart/form-data; boundary=${boundary}`,
    'content-length': String(body.length),
  });
  return { head, body };
}

describe('slow clients', () => {
  it('answers a request whose head and body come a few bytes at a time', async () => {
    const c = await rawConnect(port);
    const bytes = httpRequest('PUT', UPDATE, json(), JSON.stringify({ name: 'slowly' }));
    for (let at = 0; at < bytes.length; at += 3) {
      await c.write(bytes.subarray(at, at + 3));
      await pause();
    }
    expect((await c.response()).json.name).toBe('slowly');
    c.destroy();
  });

  it('answers other connections while one client is half-way through its head or its body', async () => {
    const slowHead = await rawConnect(port);
    await slowHead.write(`GET ${LIST} HTTP/1.1\r\nHost: x\r\nx-api-`);
    const slowBody = await rawConnect(port);
    const body = JSON.stringify({ name: 'finished later' });
    await slowBody.write(httpRequest('PUT', UPDATE, { ...json(), 'content-length': String(body.length) }));
    await slowBody.write(body.slice(0, 5));

    const other = await rawConnect(port);
    await other.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    expect((await other.response()).status).toBe(200);

    await slowHead.write(`key: ${api.key}\r\n\r\n`);
    expect((await slowHead.response()).status).toBe(200);
    await slowBody.write(body.slice(5));
    expect((await slowBody.response()).json.name).toBe('finished later');
    for (const c of [slowHead, slowBody, other]) c.destroy();
  });

  it('answers a client that half-closes its side after its request', async () => {
    const c = await rawConnect(port);
    await c.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    c.end();
    expect((await c.response()).status).toBe(200);
    c.destroy();
  });
});

describe('aborted clients', () => {
  it('applies nothing of a JSON body cut off half-way, and answers the next client', async () => {
    const before = await rawConnect(port);
    await before.write(httpRequest('PUT', UPDATE, json(), JSON.stringify({ name: 'kept' })));
    expect((await before.response()).json.name).toBe('kept');
    before.destroy();

    const body = JSON.stringify({ name: 'never applied' });
    const cut = await rawConnect(port);
    await cut.write(httpRequest('PUT', UPDATE, { ...json(), 'content-length': String(body.length) }));
    await cut.write(body.slice(0, 10));
    cut.destroy();

    const next = await rawConnect(port);
    await next.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
    expect((await next.response()).json.datasets).toMatchObject([{ name: 'kept' }]);
    next.destroy();
  });

  it('records, charges and keeps nothing of an upload cut off half-way', async () => {
    const credits = async (): Promise<unknown> => (await api.call('GET', LIST)).body.datasets[0].credits_remaining;
    const creditsBefore = await credits();
    expect(creditsBefore).toBeTypeOf('number');
    const { head, body } = upload('cut.md', '# Cut\n\n' + 'words '.repeat(20_000));
    const cut = await rawConnect(port);
    await cut.write(head);
    await cut.write(body.subarray(0, body.length >> 1));
    // The service has begun staging the file before the client goes.
    await vi.waitFor(() => expect(staged().length).toBe(1), { timeout: 10_000, interval: 20 });
    cut.destroy();
    await vi.waitFor(() => expect(staged()).toEqual([]), { timeout: 10_000, interval: 20 });

    const files = await api.call('GET', '/api/v1/ext/files/');
    expect(files.body.files).toEqual([]);
    expect(await credits()).toBe(creditsBefore);
  });

  it('stays up for a client that leaves before its answer, and answers the same request from the next', async () => {
    const { head, body } = upload('whole.md', '# Whole\n\nall of it');
    for (let i = 0; i < 5; i++) {
      const gone = await rawConnect(port);
      await gone.write(httpRequest('GET', LIST, { 'x-api-key': api.key }));
      gone.destroy();
    }
    const c = await rawConnect(port);
    await c.write(Buffer.concat([head, body]));
    const r = await c.response();
    expect([r.status, r.json.name]).toEqual([201, 'whole.md']);
    c.destroy();
  });
});
