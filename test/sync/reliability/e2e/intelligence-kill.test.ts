import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../../src/sync/state/index.js';
import { ensureDist } from '../../../helpers/build-dist.js';
import { createWorkspace } from '../../../helpers/e2e-workspace.js';
import type { ProxiedRequest } from '../../../helpers/fault-proxy.js';
import { printFigures } from '../../../helpers/figures.js';
import { syncKilledAt } from '../../../helpers/kill-run.js';
import { createPrng } from '../../../helpers/prng.js';
import { useE2eSuite } from '../../../helpers/e2e-suite.js';

/**
 * `kbsync sync` of an intelligence source as a real child process, SIGKILLed at seeded random points (a
 * write on its way to the service, a write the service has answered), then run to the end: every entry
 * is in the dataset once and charged once, and the state's ledger agrees with the service's balance.
 */

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });

type KillPoint = 'write sent' | 'write answered';
const isWrite = (req: ProxiedRequest): boolean => req.method === 'POST' && req.url.startsWith('/api/v2/ext/datasets/intelligence');

async function call(method: 'GET' | 'POST' | 'PATCH', path: string, apiKey: string, json?: unknown): Promise<Record<string, unknown>> {
  const res = await request(`${suite.svc.url}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return (await res.body.json()) as Record<string, unknown>;
}

describe('kbsync SIGKILLed during intelligence writes', () => {
  it('never pays twice: each entry is written once and charged once, however often the run was killed', async () => {
    const seed = 20_251_126;
    const rng = createPrng(seed);
    suite.proxy.setHooks({});
    suite.proxy.requests.length = 0;
    const ds = suite.svc.dataset({ plan: 'basic', credits: 1000 });
    const agent = await call('POST', '/api/v1/ext/agents/', ds.apiKey, { name: 'helper' });
    await call('PATCH', `/api/v2/ext/agents/${String(agent.id)}/datasets/${ds.datasetId}`, ds.apiKey, { mode: 'self_learning' });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'kb', path: './kb', as: 'intelligence', agent: agent.id }] },
    });
    mkdirSync(join(ws.root, 'kb'));
    const facts = Array.from({ length: 12 }, (_, i) => ({ content: `Fact ${i}: something worth knowing.` }));
    writeFileSync(join(ws.root, 'kb', 'facts.jsonl'), facts.map((f) => JSON.stringify(f)).join('\n'));
    const start = await ds.balance();
    const entries = async (): Promise<{ id: number }[]> =>
      (await call('GET', '/api/v2/ext/datasets/intelligence?limit=1000', ds.apiKey)).entries as { id: number }[];

    const kills: Record<KillPoint, number> = { 'write sent': 0, 'write answered': 0 };
    let runs = 0;
    for (; runs < 30; runs++) {
      const left = facts.length - (await entries()).length;
      if (left === 0 || kills['write sent'] + kills['write answered'] >= 6) break;
      const point: KillPoint = rng.int(0, 1) === 0 ? 'write sent' : 'write answered';
      const nth = rng.int(1, Math.min(3, left));
      const { exit, killed } = await syncKilledAt(suite.proxy, ws, {
        nth,
        sent: (req) => point === 'write sent' && isWrite(req),
        answered: (req) => point === 'write answered' && isWrite(req),
      });
      expect(killed, `run ${runs + 1}: the kill at ${point} #${nth} never landed (exit ${exit.code}): ${exit.stderr}`).toBe(true);
      kills[point]++;
    }
    const final = await ws.runJson('sync');
    const after = await ws.runJson('sync');
    const charged = start - (await ds.balance());
    const remote = await entries();
    const state = openState(ws.statePath);
    let ledger: { spent: number; reserved: number };
    try {
      ledger = state.ledgerTotals().all;
    } finally {
      state.close();
    }

    expect(final.code, final.stderr).toBe(0);
    expect(kills['write answered']).toBeGreaterThan(0);
    expect(remote).toHaveLength(facts.length);
    expect(charged).toBe(facts.length);
    expect({ spent: ledger.spent, reserved: ledger.reserved }).toEqual({ spent: charged, reserved: 0 });
    const summary = (after.report as unknown as { intelligence: { summary: Record<string, number> } }).intelligence.summary;
    expect(summary).toMatchObject({ written: 0, unchanged: facts.length, creditsSpent: 0 });
    printFigures('intelligence writes: never pay twice under SIGKILL', {
      seed,
      'kills landed': `${kills['write sent'] + kills['write answered']} (${kills['write sent']} at write sent / ${kills['write answered']} at write answered)`,
      'runs killed': runs,
      'writes that reached the service': suite.proxy.requests.filter(isWrite).length,
      'entries in the dataset': `${remote.length} for ${facts.length} records`,
      'credits charged': `${charged} for ${facts.length} planned`,
    });
  }, 180_000);
});
