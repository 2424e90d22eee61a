import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, credits, eventually, startHarness, upload, type Harness } from './helpers.js';

let h: Harness;
let now = 1_700_000_000_000;

beforeAll(async () => {
  h = await startHarness({ clock: () => now });
});
afterAll(async () => {
  await h.close();
});

describe('Idempotency-Key on paid POSTs', () => {
  it('a repeat returns the stored response and charges nothing', async () => {
    const api = apiFor(h, { credits: 100 });

    const first = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'once' }, idempotencyKey: 'k-1' });
    const repeat = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'once' }, idempotencyKey: 'k-1' });
    const agents = await api.call('GET', '/api/v1/ext/agents/');

    expect(first.status).toBe(201);
    expect(repeat.status).toBe(201);
    expect(repeat.body).toEqual(first.body);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(agents.body.agents).toHaveLength(1);
    expect(await credits(api)).toBe(95);
  });

  it('the same key with a different request is 422 idempotency_mismatch', async () => {
    const api = apiFor(h, { credits: 100 });
    await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'one' }, idempotencyKey: 'k-2' });

    const other = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'two' }, idempotencyKey: 'k-2' });
    const otherPath = await api.call('POST', '/api/v1/ext/agents/', { json: { query: 'one' }, idempotencyKey: 'k-2' });

    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_mismatch');
    expect(otherPath.status).toBe(422);
    expect(await credits(api)).toBe(99);
  });

  it('keys are per dataset', async () => {
    const a = apiFor(h, { credits: 100 });
    const b = apiFor(h, { credits: 100 });

    await a.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'x' }, idempotencyKey: 'shared' });
    const res = await b.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'y' }, idempotencyKey: 'shared' });

    expect(res.status).toBe(200);
    expect(await credits(b)).toBe(99);
  });

  it('a failed first request does not hold the key', async () => {
    const api = apiFor(h, { credits: 3 });

    const failed = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'x' }, idempotencyKey: 'k-3' });
    h.service.admin.addCredits(api.datasetId, 10);
    const retried = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'x' }, idempotencyKey: 'k-3' });

    expect(failed.status).toBe(402);
    expect(retried.status).toBe(201);
    expect(await credits(api)).toBe(8);
  });

  it('a repeat while the first still runs is 409 idempotency_in_progress', async () => {
    const api = apiFor(h, { credits: 100 });
    const boundary = 'SLOW';
    const body = new PassThrough();
    const first = request(`${h.service.url}/api/v1/ext/files/upload`, {
      method: 'POST',
      body,
      headers: { 'x-api-key': api.key, 'idempotency-key': 'k-4', 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    body.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n\r\nslow `);

    // Once its partial file exists, the first upload is streaming and holds the key.
    await eventually(async () => (readdirSync(join(h.dataDir, 'files', 'tmp')).length > 0 ? true : undefined));
    const concurrent = await upload(api, 'slow.txt', 'slow content', { idempotencyKey: 'k-4' });
    body.end(`content\r\n--${boundary}--\r\n`);
    const done = await first;
    const firstBody = (await done.body.json()) as { id: number };
    const repeat = await upload(api, 'slow.txt', 'slow content', { idempotencyKey: 'k-4' });
    const differentFile = await upload(api, 'slow.txt', 'other content', { idempotencyKey: 'k-4' });

    expect(concurrent.status).toBe(409);
    expect(concurrent.body.error.code).toBe('idempotency_in_progress');
    expect(done.statusCode).toBe(201);
    expect(repeat.status).toBe(201);
    expect(repeat.body).toEqual(firstBody);
    expect(differentFile.status).toBe(422);
    expect((await api.call('GET', '/api/v1/ext/files/')).body.total).toBe(1);
    expect(await credits(api)).toBe(95);
  });

  it('a stored response expires after 24 h', async () => {
    const api = apiFor(h, { credits: 100 });
    await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'x' }, idempotencyKey: 'k-5' });

    now += 24 * 3600 * 1000 + 1;
    const later = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'other' }, idempotencyKey: 'k-5' });

    expect(later.status).toBe(200);
    expect(await credits(api)).toBe(98);
  });

  it('a key over 255 characters is a 400', async () => {
    const api = apiFor(h, { credits: 100 });

    const res = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'x' }, idempotencyKey: 'k'.repeat(256) });

    expect(res.status).toBe(400);
  });

  it('survives a restart: the repeat after restart is still free', async () => {
    const api = apiFor(h, { credits: 100 });
    const first = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'durable' }, idempotencyKey: 'k-6' });

    await h.restart();
    const repeat = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'durable' }, idempotencyKey: 'k-6' });

    expect(repeat.body).toEqual(first.body);
    expect(await credits(api)).toBe(95);
  });
});
