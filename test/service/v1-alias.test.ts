import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1, V1_ALIAS } from '../../src/service/http/routes/paths.js';
import { apiFor, credits, eventually, multipartBody, send, startHarness, type Api, type Harness } from './helpers.js';

/**
 * Live clients of the hosted service reach the v1 routes under `/api/platform/ext` (docs/api.md,
 * "Base URL, paths, auth"); the local service answers there exactly as under `/api/v1/ext`.
 */

let h: Harness;
let api: Api;

beforeAll(async () => {
  h = await startHarness();
  api = apiFor(h, { plan: 'pro', credits: 100 });
});
afterAll(async () => {
  await h.close();
});

const aliasOf = (path: string): string => `${V1_ALIAS}${path.slice(V1.length)}`;

describe('every v1 route is served under /api/platform/ext', () => {
  it('each route of the route table answers its alias as it answers itself (no key: 401, never a 404)', async () => {
    // From the app's own route table (every route is registered there), so a route added later cannot be left without its alias.
    const v1Routes = h.service.routes.filter((r) => r.url.startsWith(`${V1}/`));
    const answers = await Promise.all(
      v1Routes.map(async (r) => {
        const path = r.url.replace(/:[^/]+/g, '1');
        const [direct, alias] = await Promise.all([
          send(`${h.service.url}${path}`, r.method, {}),
          send(`${h.service.url}${aliasOf(path)}`, r.method, {}),
        ]);
        return { route: `${r.method} ${r.url}`, direct: [direct.status, direct.text], alias: [alias.status, alias.text] };
      }),
    );

    // docs/api.md's v1 endpoints (GET and its HEAD counted apart): a table that lost its routes would pass vacuously.
    expect(v1Routes.filter((r) => r.method !== 'HEAD').length).toBeGreaterThanOrEqual(12);
    for (const a of answers) {
      expect(a.alias, a.route).toEqual(a.direct);
      expect(a.direct[0], a.route).toBe(401);
    }
  });

  it('takes an upload, and gives the same answers with a key: datasets, files, a trailing slash or none', async () => {
    const { body, contentType } = multipartBody({ name: 'alias.md', content: '# Alias\n\nUploaded through /api/platform/ext.\n' });
    const uploaded = await api.call('POST', `${V1_ALIAS}/files/upload`, { body, headers: { 'content-type': contentType } });
    // Processed first, so that both listings see the same status.
    await eventually(async () => ((await api.call('GET', `${V1}/files/`)).body.files[0]?.status === 'processed' ? true : undefined));
    const [datasets, datasetsAlias, files, filesAlias, noSlash] = await Promise.all([
      api.call('GET', `${V1}/datasets/`),
      api.call('GET', `${V1_ALIAS}/datasets/`),
      api.call('GET', `${V1}/files/`),
      api.call('GET', `${V1_ALIAS}/files/`),
      api.call('GET', `${V1_ALIAS}/datasets`),
    ]);

    expect(uploaded.status).toBe(201);
    expect(datasets.status).toBe(200);
    expect(datasetsAlias.body).toEqual(datasets.body);
    expect(noSlash.body).toEqual(datasets.body);
    expect(filesAlias.body).toEqual(files.body);
    expect(files.body.files.map((f: { name: string }) => f.name)).toContain('alias.md');
  });

  it('sends an upload through the alias to the same handler (a body of the wrong type: the same 400)', async () => {
    const direct = await api.call('POST', `${V1}/files/upload`, { json: {} });
    const alias = await api.call('POST', `${V1_ALIAS}/files/upload`, { json: {} });

    expect(direct.status).toBe(400);
    expect(alias.status).toBe(direct.status);
    expect(alias.body).toEqual(direct.body);
  });

  it('shares idempotency with /api/v1: the same key and request through the other prefix is a replay, charged once', async () => {
    const before = await credits(api);
    const first = await api.call('POST', `${V1}/datasets/query`, { json: { query: 'alias' }, idempotencyKey: 'alias-query-1' });
    const again = await api.call('POST', `${V1_ALIAS}/datasets/query`, { json: { query: 'alias' }, idempotencyKey: 'alias-query-1' });
    const other = await api.call('POST', `${V1_ALIAS}/datasets/query`, { json: { query: 'other' }, idempotencyKey: 'alias-query-1' });
    const after = await credits(api);

    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_mismatch');
    expect(before - after).toBe(1);
  });

  it('answers 405 with the same Allow (a key or none), and 404 naming the path as sent', async () => {
    const direct = await api.call('DELETE', `${V1}/agents/`);
    const alias = await api.call('DELETE', `${V1_ALIAS}/agents/`);
    const unknown = await api.call('GET', `${V1_ALIAS}/unknown`);
    const noKey = await api.call('DELETE', `${V1_ALIAS}/agents/`, { noAuth: true });

    expect(alias.status).toBe(405);
    expect(alias.headers['allow']).toBe(direct.headers['allow']);
    expect(alias.body).toEqual(direct.body);
    expect(noKey.status).toBe(405);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe(`no route GET ${V1_ALIAS}/unknown`);
  });

  it('aliases only v1, and only the whole prefix', async () => {
    const v2 = await api.call('GET', `${V1_ALIAS}/webhooks`);
    const v2Direct = await api.call('GET', '/api/v2/ext/webhooks');
    const partial = await api.call('GET', '/api/platform/extra/datasets/');

    expect(v2Direct.status).toBe(200);
    expect(v2.status).toBe(404);
    expect(partial.status).toBe(404);
  });
});
