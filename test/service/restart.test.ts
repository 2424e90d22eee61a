import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedService } from '../../src/service/embedded.js';
import { apiFor, bindApi, credits, eventually, send, startHarness, tempDir, upload } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('state after a restart (same data dir)', () => {
  it('keeps datasets, keys, balances, agents, files (processed), entries and webhooks', async () => {
    const h = await startHarness({ allowInsecureWebhooks: true });
    cleanups.push(() => h.close());
    const api = apiFor(h, { credits: 100 });
    const agent = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'keeper', config: { top_k: 4 } } });
    await api.call('PATCH', `/api/v2/ext/agents/${agent.body.id}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
    const file = await upload(api, 'notes.txt', 'Persistent knowledge about penguins.');
    await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agent.body.id, content: 'Penguins cannot fly.' } });
    await api.call('POST', '/api/v2/ext/webhooks', { json: { url: 'http://127.0.0.1:9/hook' } });
    await eventually(async () => ((await api.call('GET', '/api/v1/ext/files/')).body.files[0].status === 'processed' ? true : undefined));
    // The entry indexed too: a stop mid-indexing leaves it pending for the next start, not what this test keeps.
    await eventually(async () =>
      (await api.call('GET', '/api/v2/ext/datasets/intelligence')).body.entries[0]?.status === 'processed' ? true : undefined,
    );
    const before = await Promise.all(
      ['/api/v1/ext/agents/', '/api/v1/ext/files/', '/api/v2/ext/datasets/intelligence', '/api/v2/ext/webhooks'].map((p) =>
        api.call('GET', p),
      ),
    );

    await h.restart({ allowInsecureWebhooks: true });
    const after = await Promise.all(
      ['/api/v1/ext/agents/', '/api/v1/ext/files/', '/api/v2/ext/datasets/intelligence', '/api/v2/ext/webhooks'].map((p) =>
        api.call('GET', p),
      ),
    );
    const hits = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'penguins' } });

    expect(after.map((r) => r.body)).toEqual(before.map((r) => r.body));
    expect(after[1]?.body.files[0]).toMatchObject({ id: file.body.id, status: 'processed' });
    expect(hits.body.results.length).toBe(2);
    expect(await credits(api)).toBe(100 - 5 - 5 - 1 - 1);
  });

  it('stores keys hashed: the plain key is nowhere in the database', async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const api = apiFor(h);
    await api.call('GET', '/api/v1/ext/datasets/');
    await h.service.close();

    const db = new Database(join(h.dataDir, 'service.db'), { readonly: true });
    const rows = db.prepare('SELECT key_hash, prefix FROM api_keys').all() as { key_hash: string; prefix: string }[];
    db.close();
    const raw = readFileSync(join(h.dataDir, 'service.db')).toString('latin1');

    expect(rows).toHaveLength(1);
    expect(rows[0]?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(api.key.startsWith(rows[0]?.prefix ?? 'x')).toBe(true);
    expect(raw.includes(api.key)).toBe(false);
    await h.restart();
  });
});

describe('embedded service', () => {
  it('creates a dataset + key once (0600 key file, 0700 dir), reuses it, and follows the configured plan', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const dataDir = join(dir.path, 'service');

    const first = await startEmbeddedService({ dataDir, plan: 'basic' });
    const firstInfo = await send(`${first.baseUrl}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': first.apiKey });
    await first.close();
    const second = await startEmbeddedService({ dataDir, plan: 'pro' });
    cleanups.push(() => second.close());
    const secondInfo = await send(`${second.baseUrl}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': second.apiKey });

    expect(first.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(firstInfo.body.datasets[0]).toMatchObject({ id: Number(first.datasetId), plan: 'basic', credits_remaining: 1000 });
    expect(second.apiKey).toBe(first.apiKey);
    expect(second.datasetId).toBe(first.datasetId);
    expect(secondInfo.body.datasets[0]).toMatchObject({ plan: 'pro', credits_remaining: 1000 });
    expect(readFileSync(join(dataDir, 'embedded-key'), 'utf8').trim()).toBe(first.apiKey);
    expect(statSync(join(dataDir, 'embedded-key')).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, 'service.db')).mode & 0o777).toBe(0o600);
  });

  it('admin addCredits raises the balance; an unknown dataset is not_found', async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const { datasetId, apiKey } = h.service.admin.createDataset({ name: 'x', plan: 'free', credits: 0 });

    const balance = h.service.admin.addCredits(datasetId, 25);

    expect(balance).toBe(25);
    expect(await credits(bindApi(h, datasetId, apiKey))).toBe(25);
    expect(() => h.service.admin.addCredits('424242', 5)).toThrow(/not found/);
  });
});
