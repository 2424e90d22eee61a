import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { ensureDist } from '../../helpers/build-dist.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, type Workspace } from '../../helpers/e2e-workspace.js';
import { isUpload, type ProxiedRequest } from '../../helpers/fault-proxy.js';
import { printFigures } from '../../helpers/figures.js';
import { killHard, spawnKbsync } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });

/** Three 5-credit files behind the proxy, uploaded one at a time (a.md first: same cost, path order). */
function setup(): { ds: E2eDataset; ws: Workspace } {
  suite.proxy.setHooks({});
  suite.proxy.requests.length = 0;
  const ds = suite.svc.dataset({ credits: 1000 });
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.proxy.url,
    apiKey: ds.apiKey,
    config: { upload: { concurrency: 1, requestsPerSecond: 1000 } },
  });
  ws.write('a.md', '# A\nalpha\n');
  ws.write('b.md', '# B\nbravo\n');
  ws.write('c.md', '# C\ncharlie\n');
  return { ds, ws };
}

const fileNameOf = (req: ProxiedRequest): string | undefined => /filename="([^"]+)"/.exec(req.body.toString('latin1'))?.[1];
const uploadsOf = (name: string): ProxiedRequest[] => suite.proxy.requests.filter((r) => isUpload(r) && fileNameOf(r) === name);

/** Names of the dataset's files with how many copies each has. */
async function copies(ds: E2eDataset): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of await ds.files()) out[f.name] = (out[f.name] ?? 0) + 1;
  return out;
}

function ledgerSpent(ws: Workspace): number {
  const state = openState(ws.statePath);
  try {
    return state.ledgerTotals().all.spent;
  } finally {
    state.close();
  }
}

describe('kbsync killed during an upload (a real child process, SIGKILL)', () => {
  it('killed after the service answered: the rerun pays nothing again and tracks the id the service gave', async () => {
    const { ds, ws } = setup();
    const start = await ds.balance();
    let given: { id: number; name: string } | undefined;

    // The hooks are in place before the child (started in this same tick) can send anything.
    const k = spawnKbsync(['sync', '-c', ws.configPath], ws.root);
    suite.proxy.setHooks({
      onResponse: async (req, res) => {
        if (!isUpload(req) || given !== undefined) return 'relay';
        given = JSON.parse(res.body.toString()) as { id: number; name: string };
        await killHard(k);
        return 'drop';
      },
    });
    const exit = await k.exited;
    const chargedBeforeRerun = start - (await ds.balance());
    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');
    const status = await ws.runJson('status');

    expect(exit.signal).toBe('SIGKILL');
    expect(given?.name).toBe('a.md');
    expect(chargedBeforeRerun).toBe(5);
    expect(rerun.code).toBe(0);
    expect(itemOf(rerun.report, 'a.md').action).toBe('skip:unchanged');
    expect(itemOf(rerun.report, 'b.md').action).toBe('upload');
    expect(rerun.report.summary).toMatchObject({ uploaded: 2, creditsSpent: 10, failed: 0 });
    expect(uploadsOf('a.md')).toHaveLength(1);
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1, 'c.md': 1 });
    expect(start - (await ds.balance())).toBe(15);
    expect(itemOf(status.report, 'a.md').remoteId).toBe(String(given?.id));
    expect(ledgerSpent(ws)).toBe(15);
    printFigures('killed after the service answered', {
      'kills landed': exit.signal === 'SIGKILL' ? 1 : 0,
      'uploads of a.md': uploadsOf('a.md').length,
      'copies of a.md': (await copies(ds))['a.md'] ?? 0,
      'credits charged': `${start - (await ds.balance())} for 15 planned`,
      'ledger spent': ledgerSpent(ws),
    });
  });

  it('killed before the upload reached the service: the rerun uploads it exactly once, with the same idempotency key', async () => {
    const { ds, ws } = setup();
    const start = await ds.balance();
    let killed = false;

    const k = spawnKbsync(['sync', '-c', ws.configPath], ws.root);
    suite.proxy.setHooks({
      onRequest: async (req) => {
        if (!isUpload(req) || killed) return { kind: 'forward' };
        killed = true;
        await killHard(k);
        return { kind: 'drop' };
      },
    });
    const exit = await k.exited;
    const chargedBeforeRerun = start - (await ds.balance());
    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');
    const again = await ws.runJson('sync');

    expect(exit.signal).toBe('SIGKILL');
    expect(chargedBeforeRerun).toBe(0);
    expect((await ds.files()).length).toBe(3);
    expect(rerun.code).toBe(0);
    expect(rerun.report.summary).toMatchObject({ uploaded: 3, creditsSpent: 15, failed: 0 });
    const attempts = uploadsOf('a.md');
    expect(attempts).toHaveLength(2);
    expect(attempts[1]?.headers['idempotency-key']).toBe(attempts[0]?.headers['idempotency-key']);
    expect(again.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1, 'c.md': 1 });
    expect(start - (await ds.balance())).toBe(15);
    expect(ledgerSpent(ws)).toBe(15);
    printFigures('killed before the upload reached the service', {
      'kills landed': exit.signal === 'SIGKILL' ? 1 : 0,
      'uploads of a.md': attempts.length,
      'with the same idempotency key': attempts[1]?.headers['idempotency-key'] === attempts[0]?.headers['idempotency-key'] ? 'yes' : 'no',
      'copies of a.md': (await copies(ds))['a.md'] ?? 0,
      'credits charged': `${start - (await ds.balance())} for 15 planned`,
      'ledger spent': ledgerSpent(ws),
    });
  });

  it('a lost answer without a crash: the item is reported unknown (exit 1), then reconciled, never paid twice', async () => {
    const { ds, ws } = setup();
    const start = await ds.balance();
    let lost = false;
    suite.proxy.setHooks({
      onResponse: (req) => {
        if (!isUpload(req) || lost) return 'relay';
        lost = true;
        return 'drop';
      },
    });

    const first = await ws.runJson('sync');
    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');

    expect(first.code).toBe(1);
    expect(itemOf(first.report, 'a.md')).toMatchObject({ outcome: 'unknown', credits: 0 });
    expect(first.report.summary).toMatchObject({ failed: 1, creditsSpent: 10 });
    expect(rerun.code).toBe(0);
    expect(rerun.report.summary).toMatchObject({ uploaded: 0, unchanged: 3, creditsSpent: 0 });
    expect(uploadsOf('a.md')).toHaveLength(1);
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1, 'c.md': 1 });
    expect(start - (await ds.balance())).toBe(15);
    expect(ledgerSpent(ws)).toBe(15);
    printFigures('a lost answer without a crash', {
      'uploads of a.md': uploadsOf('a.md').length,
      'copies of a.md': (await copies(ds))['a.md'] ?? 0,
      'credits charged': `${start - (await ds.balance())} for 15 planned`,
      'ledger spent': ledgerSpent(ws),
    });
  });
});
