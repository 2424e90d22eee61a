import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2eService, type E2eService } from '../../helpers/e2e-service.js';
import { createTempDirs, createWorkspace } from '../../helpers/e2e-workspace.js';
import { startFaultProxy, type FaultProxy } from '../../helpers/fault-proxy.js';

let svc: E2eService;
let proxy: FaultProxy;
const temp = createTempDirs();
beforeAll(async () => {
  svc = await startE2eService();
  // Only counts calls: every request is forwarded untouched.
  proxy = await startFaultProxy(svc.url);
});
afterAll(async () => {
  await proxy.close();
  await svc.close();
  temp.cleanup();
});

const reindexCalls = (): number => proxy.requests.filter((r) => r.method === 'POST' && r.url.includes('/datasets/reindex')).length;

describe('one reindex after a bulk change (reindex.minChangedFiles 3)', () => {
  it.each([
    { plan: 'pro', reindexes: 1, credits: 3 * 5 + 2 },
    { plan: 'basic', reindexes: 0, credits: 3 * 5 },
  ])('on $plan: $reindexes reindex, $credits credits, and none on a run that changes less', async ({ plan, reindexes, credits }) => {
    proxy.requests.length = 0;
    const ds = svc.dataset({ plan: plan as 'pro' | 'basic', credits: 1000 });
    const ws = createWorkspace(temp.make(), { baseUrl: proxy.url, apiKey: ds.apiKey, plan, config: { reindex: { minChangedFiles: 3 } } });
    for (const name of ['a', 'b', 'c']) ws.write(`${name}.md`, `# ${name}\n`);
    const start = await ds.balance();

    const bulk = await ws.runJson('sync');
    const chargedBulk = start - (await ds.balance());
    ws.write('a.md', '# a, edited\n');
    const small = await ws.runJson('sync');

    expect(bulk.code).toBe(0);
    expect(reindexCalls()).toBe(reindexes);
    expect(chargedBulk).toBe(credits);
    expect(bulk.report.summary.creditsSpent).toBe(credits);
    expect(small.report.summary.creditsSpent).toBe(5);
    expect(start - (await ds.balance())).toBe(credits + 5);
  });
});
