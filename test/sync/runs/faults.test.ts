import { describe, expect, it } from 'vitest';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, type Workspace } from '../../helpers/e2e-workspace.js';
import { isUpload, type ProxiedRequest } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { printFigures } from '../../helpers/figures.js';

const suite = useE2eSuite({ proxy: true });

function setup(): { ds: E2eDataset; ws: Workspace } {
  suite.proxy.setHooks({});
  suite.proxy.requests.length = 0;
  const ds = suite.svc.dataset({ credits: 1000 });
  const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.proxy.url, apiKey: ds.apiKey });
  ws.write('a.md', '# A\n');
  ws.write('b.md', '# B\n');
  return { ds, ws };
}

const uploadsOf = (name: string): ProxiedRequest[] =>
  suite.proxy.requests.filter((r) => isUpload(r) && r.body.includes(`filename="${name}"`));

describe('answers a real server gives only under stress', () => {
  it('429 with Retry-After on an upload: waited for, sent again, charged once', async () => {
    const { ds, ws } = setup();
    const start = await ds.balance();
    let refused = 0;
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (!isUpload(req) || !req.body.includes('filename="a.md"') || refused >= 2) return { kind: 'forward' };
        refused++;
        return {
          kind: 'respond',
          status: 429,
          headers: { 'retry-after': '0' },
          json: { error: { code: 'rate_limited', message: 'slow down' } },
        };
      },
    });

    const run = await ws.runJson('sync');

    expect(run.code).toBe(0);
    expect(itemOf(run.report, 'a.md')).toMatchObject({ outcome: 'done', credits: 5 });
    expect(uploadsOf('a.md')).toHaveLength(3);
    expect(run.report.summary).toMatchObject({ uploaded: 2, failed: 0, creditsSpent: 10 });
    expect(start - (await ds.balance())).toBe(10);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'b.md']);
  });

  it.each([
    ['a 502 from a gateway', { status: 502, headers: { 'content-type': 'text/html' }, body: '<html>Bad Gateway</html>' }],
    [
      'a 500 internal error',
      {
        status: 500,
        headers: { 'content-type': 'application/json' },
        body: '{"error":{"code":"internal","message":"crashed after writing"}}',
      },
    ],
    ['a 503', { status: 503, headers: { 'content-type': 'text/plain' }, body: 'unavailable' }],
    [
      '409 idempotency_in_progress',
      {
        status: 409,
        headers: { 'content-type': 'application/json' },
        body: '{"error":{"code":"idempotency_in_progress","message":"still running"}}',
      },
    ],
    [
      'a 201 whose body names its fields differently',
      { status: 201, headers: { 'content-type': 'application/json' }, body: '{"file_id":"x","name":"a.md"}' },
    ],
    ['a 201 in HTML', { status: 201, headers: { 'content-type': 'text/html' }, body: '<html>created</html>' }],
  ])('%s after the service took (and charged) the upload: unknown, reconciled on the rerun, never paid twice', async (what, answer) => {
    const { ds, ws } = setup();
    const start = await ds.balance();
    suite.proxy.setHooks({
      onResponse: (req, res) => {
        if (isUpload(req) && req.body.includes('filename="a.md"')) Object.assign(res, { ...answer, body: Buffer.from(answer.body) });
        return 'relay';
      },
    });

    const first = await ws.runJson('sync');
    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');

    expect(first.code).toBe(1);
    expect(itemOf(first.report, 'a.md').outcome).toBe('unknown');
    expect(rerun.code).toBe(0);
    expect(rerun.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });
    expect(uploadsOf('a.md')).toHaveLength(1);
    expect(start - (await ds.balance())).toBe(10);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'b.md']);
    printFigures(what, {
      'first run': `a.md ${itemOf(first.report, 'a.md').outcome}, exit ${first.code}`,
      'uploads of a.md': uploadsOf('a.md').length,
      'credits charged': `${start - (await ds.balance())} for 10 planned`,
    });
  });

  it('502 from a gateway that never reached the service: the rerun sends it once, with the same idempotency key', async () => {
    const { ds, ws } = setup();
    const start = await ds.balance();
    suite.proxy.setHooks({
      onRequest: (req) =>
        isUpload(req) && req.body.includes('filename="a.md"')
          ? { kind: 'respond', status: 502, json: { error: 'bad gateway' } }
          : { kind: 'forward' },
    });

    const first = await ws.runJson('sync');
    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');

    expect(first.code).toBe(1);
    expect(rerun.code).toBe(0);
    expect(itemOf(rerun.report, 'a.md')).toMatchObject({ action: 'upload', outcome: 'done', credits: 5 });
    const attempts = uploadsOf('a.md');
    expect(attempts).toHaveLength(2);
    expect(attempts[1]?.headers['idempotency-key']).toBe(attempts[0]?.headers['idempotency-key']);
    expect(start - (await ds.balance())).toBe(10);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'b.md']);
  });
});
