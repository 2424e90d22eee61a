import { readdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { freshDatabase } from '../../helpers/postgres.js';

const suite = useE2eSuite();

describe('kbsync with `state: postgres://...`', () => {
  it('syncs, plans nothing more, shows the runners in status, and keeps no state file', async () => {
    const url = await freshDatabase('cli');
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { state: url } });
    for (const n of [1, 2, 3]) ws.write(`d${n}.md`, `# doc ${n}\n`);

    const first = await ws.runJson('sync');
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.summary).toMatchObject({ uploaded: 3, creditsSpent: 15 });
    const again = await ws.runJson('plan');
    expect(again.report.summary).toMatchObject({ uploaded: 0, unchanged: 3 });

    const status = await ws.run('status', '--json');
    const report = JSON.parse(status.stdout) as { credits: { month: number }; runners: { sources: string; spent: number; runs: number }[] };
    expect(report.credits.month).toBe(15);
    expect(report.runners.find((r) => r.spent === 15)).toMatchObject({ sources: 'docs' });
    const text = await ws.run('status');
    expect(text.stdout).toMatch(
      /runners:\s+1 runner wrote to this shared state\n  #\d+:\s+\S+ pid \d+, sources docs, ended; last run \S+ \(1 run\); 15 credits spent/,
    );

    const view = openState(url, { lock: false });
    try {
      expect(view.trackedCount()).toBe(3);
      expect(view.verifyTotals()).toEqual([]);
    } finally {
      view.close();
    }
    expect((await ds.files()).length).toBe(3);
    // Nothing was taken as a file name: no SQLite state, no folder named after the URL.
    expect(readdirSync(ws.root).sort()).toEqual(['docs', 'kbsync.yaml']);
  });

  it('says which PostgreSQL state it cannot reach (password hidden), exit 2, and sends nothing', async () => {
    const ds = suite.svc.dataset({ credits: 10 });
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { state: `postgres://kb:hunter2@127.0.0.1:${closed}/kb` },
    });
    ws.write('a.md', '# a\n');
    const r = await ws.run('sync');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot open the PostgreSQL state postgres://kb:***@127.0.0.1:${closed}/kb`);
    expect(r.stderr).not.toContain('hunter2');
    expect(await ds.files()).toEqual([]);
  });

  it('refuses a state URL of another scheme instead of taking it as a file name', async () => {
    const ds = suite.svc.dataset({ credits: 10 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { state: 'mysql://db/kb' } });
    const r = await ws.run('plan');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/state.*"mysql:\/\/" is not a state kbsync can keep/s);
  });
});
