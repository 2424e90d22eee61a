import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { createWorkspace, itemOf, runKbsync } from '../../helpers/e2e-workspace.js';
import { isUpload } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite({ proxy: true });

/** A workspace with two small files. */
function twoFiles(o: { credits?: number; baseUrl?: string; apiKey?: string; budget?: Record<string, unknown> } = {}) {
  const ds = suite.svc.dataset({ credits: o.credits ?? 1000 });
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: o.baseUrl ?? suite.svc.url,
    apiKey: o.apiKey ?? ds.apiKey,
    config: o.budget === undefined ? {} : { budget: o.budget },
  });
  ws.write('a.md', '# A\n');
  ws.write('b.md', '# B\n');
  return { ds, ws };
}

describe('exit codes of kbsync sync', () => {
  it('0 when done, and 0 again when there is nothing to do', async () => {
    const { ws } = twoFiles();

    const first = await ws.run('sync');
    const second = await ws.run('sync');

    expect([first.code, second.code]).toEqual([0, 0]);
    expect(second.stdout).toMatch(/0 uploaded/);
  });

  it('1 when an item failed (the service refuses one upload with a 400); the others are done and the rerun sends it', async () => {
    const { ds, ws } = twoFiles({ baseUrl: suite.proxy.url });
    const start = await ds.balance();
    suite.proxy.setHooks({
      onRequest: (req) =>
        isUpload(req) && req.body.includes('filename="b.md"')
          ? { kind: 'respond', status: 400, json: { error: { code: 'invalid_request', message: 'multipart part rejected' } } }
          : { kind: 'forward' },
    });

    const failed = await ws.runJson('sync');
    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');

    expect(failed.code).toBe(1);
    expect(itemOf(failed.report, 'b.md')).toMatchObject({ action: 'upload', outcome: 'failed', credits: 0 });
    expect(String(itemOf(failed.report, 'b.md').error)).toMatch(/multipart part rejected/);
    expect(itemOf(failed.report, 'a.md')).toMatchObject({ outcome: 'done', credits: 5 });
    expect(failed.report.summary).toMatchObject({ failed: 1, creditsSpent: 5 });
    expect(rerun.code).toBe(0);
    expect(itemOf(rerun.report, 'b.md')).toMatchObject({ action: 'upload', outcome: 'done', credits: 5 });
    expect(start - (await ds.balance())).toBe(10);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'b.md']);
  });

  it('2 for a config error, naming the key and its line', async () => {
    const { ws } = twoFiles();
    writeFileSync(ws.configPath, `target:\n  kind: remote\n  baseUrl: ${suite.svc.url}\n  apiKey: k\nupload:\n  concurrency: 0\n`);

    const bad = await ws.run('sync');
    const missing = await runKbsync(['sync', '-c', 'no-such.yaml'], ws.root);

    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/kbsync\.yaml:6: upload\.concurrency/);
    expect(missing.code).toBe(2);
  });

  it('3 when the budget leaves work queued', async () => {
    const { ds, ws } = twoFiles({ budget: { maxCreditsPerRun: 5 } });
    const start = await ds.balance();

    const run = await ws.runJson('sync');

    expect(run.code).toBe(3);
    expect(run.report.summary).toMatchObject({ uploaded: 1, deferred: 1, creditsSpent: 5 });
    expect(itemOf(run.report, 'b.md')).toMatchObject({ action: 'defer:over-budget', credits: 0 });
    expect(start - (await ds.balance())).toBe(5);
  });

  it('4 when the key is refused, before anything is sent', async () => {
    const { ds, ws } = twoFiles({ apiKey: 'kb_not_a_real_key' });
    const start = await ds.balance();

    const run = await ws.run('sync');

    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/unauthori[sz]ed|401/i);
    expect(run.stderr).not.toContain('kb_not_a_real_key');
    expect(await ds.balance()).toBe(start);
    expect(await ds.files()).toEqual([]);
  });

  it('4 when the dataset runs out of credits; it stops spending and charges nothing it cannot pay', async () => {
    const { ds, ws } = twoFiles({ credits: 7 });

    const run = await ws.runJson('sync');

    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/insufficient_credits/);
    expect(run.report.summary).toMatchObject({ creditsSpent: 5 });
    expect(await ds.balance()).toBe(2);
    expect((await ds.files()).length).toBe(1);
  });
});

describe('exit codes of kbsync plan', () => {
  it('0 when the sync would do all it plans, 3 when the budget would leave work queued; it spends nothing either way', async () => {
    const { ds, ws } = twoFiles({ budget: { maxCreditsPerRun: 5 } });
    const start = await ds.balance();

    const over = await ws.runJson('plan');
    ws.configure({ budget: { maxCreditsPerRun: 10 } });
    const within = await ws.runJson('plan');

    expect(over.code).toBe(3);
    expect(over.report.summary).toMatchObject({ uploaded: 1, deferred: 1, creditsPlanned: 5 });
    expect(within.code).toBe(0);
    expect(within.report.summary).toMatchObject({ uploaded: 2, deferred: 0, creditsPlanned: 10 });
    expect(await ds.balance()).toBe(start);
    expect(await ds.files()).toEqual([]);
  });
});

describe('one kbsync per state', () => {
  it('a second kbsync on the same state refuses (exit 2), naming the holder, and changes nothing', async () => {
    const { ds, ws } = twoFiles();
    const holder = openState(ws.statePath);
    let run;
    try {
      run = await ws.run('sync');
    } finally {
      holder.close();
    }
    const after = await ws.run('sync');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`pid ${process.pid}`);
    expect(run.stderr).toMatch(/another kbsync/);
    expect(after.code).toBe(0);
    expect((await ds.files()).length).toBe(2);
  });
});
