import { describe, expect, it } from 'vitest';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import type { ProxiedRequest } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { creditsOfDay } from '../../helpers/state-credits.js';

/**
 * `kbsync query` and `kbsync chat` cost a credit each: like a sync's calls, each is recorded in the
 * state's outbox and admitted against the budget caps before it is sent, and its outcome recorded after.
 */

const suite = useE2eSuite({ proxy: true });

const isQuery = (r: ProxiedRequest): boolean => r.method === 'POST' && /\/query\/?(\?|$)/.test(r.url);
const isChat = (r: ProxiedRequest): boolean => r.method === 'POST' && /\/agents\/[^/]+\/chat\/?(\?|$)/.test(r.url);

function setup(budget: { maxCreditsPerDay: number }): { ds: E2eDataset; ws: Workspace } {
  suite.proxy.setHooks({});
  suite.proxy.requests.length = 0;
  const ds = suite.svc.dataset({ credits: 1000 });
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.proxy.url,
    apiKey: ds.apiKey,
    config: { budget: { maxCreditsPerRun: 100_000, maxCreditsPerDay: budget.maxCreditsPerDay, maxCreditsPerMonth: 100_000 } },
  });
  return { ds, ws };
}

describe('query and chat go through the credit ledger', () => {
  it('a query is recorded and charged once; over the day cap the next one is not sent (exit 3), and says which cap', async () => {
    const { ds, ws } = setup({ maxCreditsPerDay: 1 });
    const start = await ds.balance();

    const first = await ws.run('query', 'anything at all');

    expect(first.code).toBe(0);
    expect(creditsOfDay(ws)).toEqual({ spent: 1, reserved: 0 });
    expect(start - (await ds.balance())).toBe(1);

    const second = await ws.run('query', 'anything else');

    expect(second.code).toBe(3);
    expect(second.stderr).toMatch(/query not sent: it would exceed maxCreditsPerDay \(1 \+ 1 > 1\)/);
    expect(suite.proxy.requests.filter(isQuery)).toHaveLength(1);
    expect(start - (await ds.balance())).toBe(1);
    expect(creditsOfDay(ws)).toEqual({ spent: 1, reserved: 0 });
  });

  it('a chat the service refuses (unknown agent) releases its reservation: nothing is counted', async () => {
    const { ds, ws } = setup({ maxCreditsPerDay: 100 });
    const start = await ds.balance();

    const run = await ws.run('chat', '999999', 'hello?');

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/not_found|404/);
    expect(suite.proxy.requests.filter(isChat)).toHaveLength(1);
    expect(creditsOfDay(ws)).toEqual({ spent: 0, reserved: 0 });
    expect(start - (await ds.balance())).toBe(0);
  });

  it('a query whose answer is lost stays reserved (counted against the caps), and the next sync books it as spent', async () => {
    const { ws } = setup({ maxCreditsPerDay: 100 });
    suite.proxy.setHooks({ onResponse: (req) => (isQuery(req) ? 'drop' : 'relay') });

    const lost = await ws.run('query', 'lost answer');

    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/outcome unknown/);
    expect(creditsOfDay(ws)).toEqual({ spent: 0, reserved: 1 });

    suite.proxy.setHooks({});
    ws.write('a.md', '# A\n');
    const sync = await ws.runJson('sync');

    expect(sync.code).toBe(0);
    expect(creditsOfDay(ws)).toEqual({ spent: 1 + 5, reserved: 0 });
    expect(suite.proxy.requests.filter(isQuery)).toHaveLength(1);
  });
});
