import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

// Only counts calls: every request is forwarded untouched.
const suite = useE2eSuite({ proxy: true });

const reindexCalls = (): number => suite.proxy.requests.filter((r) => r.method === 'POST' && r.url.includes('/datasets/reindex')).length;

describe('one reindex after a bulk change (reindex.minChangedFiles 3)', () => {
  it.each([
    { plan: 'pro', reindexes: 1, credits: 3 * 5 + 2 },
    { plan: 'basic', reindexes: 0, credits: 3 * 5 },
  ])('on $plan: $reindexes reindex, $credits credits, and none on a run that changes less', async ({ plan, reindexes, credits }) => {
    suite.proxy.requests.length = 0;
    const ds = suite.svc.dataset({ plan: plan as 'pro' | 'basic', credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      plan,
      config: { reindex: { minChangedFiles: 3 } },
    });
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
