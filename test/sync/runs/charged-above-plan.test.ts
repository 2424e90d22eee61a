import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { createWorkspace, type JsonItem } from '../../helpers/e2e-workspace.js';
import { isUpload } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

/**
 * The planner and every reservation price calls with docs/api.md's cost table. A service that charges more
 * (the hosted docs state another upload formula) would make those checks untrue: the run must stop
 * spending at the first such charge, record the real charge, and leave the rest for the next run.
 */

const suite = useE2eSuite({ proxy: true });
const FILES = 12;
const CONCURRENCY = 4;

describe('a service that charges more than the cost table', () => {
  it('stops starting paid calls at the first charge above plan: at most the calls in flight finish, the real charges are recorded, exit 3; the rerun sends only the rest', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: {
        upload: { concurrency: CONCURRENCY, requestsPerSecond: 1000 },
        budget: { maxCreditsPerRun: FILES * 5, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 },
      },
    });
    for (let i = 0; i < FILES; i++) ws.write(`f${String(i).padStart(2, '0')}.md`, `# file ${i}\n`);
    const start = await ds.balance();
    suite.proxy.setHooks({
      onResponse: (req, res) => {
        if (isUpload(req) && res.status === 201)
          res.body = Buffer.from(JSON.stringify({ ...JSON.parse(res.body.toString()), credits_charged: 7 }));
        return 'relay';
      },
    });

    const first = await ws.runJson('sync');

    const done = first.report.items.filter((i: JsonItem) => i.outcome === 'done');
    const unsent = first.report.items.filter((i: JsonItem) => i.outcome === 'not-run');
    expect(first.code).toBe(3);
    expect(first.stderr).toMatch(/stopped spending: the service charged 7 credits for the upload of f\d\d\.md, planned at 5/);
    expect(done.length).toBeGreaterThanOrEqual(1);
    expect(done.length).toBeLessThanOrEqual(CONCURRENCY);
    expect(done.length + unsent.length).toBe(FILES);
    for (const item of unsent) expect(item.reason).toMatch(/not sent: the run stopped spending \(charged_above_plan\)$/);
    expect(first.report.summary).toMatchObject({ uploaded: done.length, deferred: unsent.length, creditsSpent: 7 * done.length });
    expect(7 * done.length).toBeLessThanOrEqual(FILES * 5);
    const state = openState(ws.statePath);
    try {
      expect(state.creditsUsed(null).spent.day).toBe(7 * done.length);
    } finally {
      state.close();
    }
    // The service itself charged its real price; only the answer was rewritten.
    expect(start - (await ds.balance())).toBe(5 * done.length);

    suite.proxy.setHooks({});
    const rerun = await ws.runJson('sync');

    expect(rerun.code).toBe(0);
    expect(rerun.report.summary).toMatchObject({ uploaded: unsent.length, unchanged: done.length, creditsSpent: 5 * unsent.length });
    expect(suite.proxy.requests.filter(isUpload)).toHaveLength(FILES);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(first.report.items.map((i: JsonItem) => i.path).sort());
  });

  it('exits 3 even when every call was already in flight, so nothing was left unsent: the caps may have been passed', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { upload: { concurrency: 2, requestsPerSecond: 1000 } },
    });
    ws.write('a.md', '# a\n');
    suite.proxy.setHooks({
      onResponse: (req, res) => {
        if (isUpload(req) && res.status === 201)
          res.body = Buffer.from(JSON.stringify({ ...JSON.parse(res.body.toString()), credits_charged: 7 }));
        return 'relay';
      },
    });

    const run = await ws.runJson('sync');
    suite.proxy.setHooks({});

    expect(run.report.summary).toMatchObject({ uploaded: 1, deferred: 0, failed: 0, creditsSpent: 7 });
    expect(run.stderr).toMatch(/stopped spending: the service charged 7 credits/);
    expect(run.code).toBe(3);
  });

  it("priced with target.uploadCost as the service charges (the hosted docs' formula), nothing is above plan: every file is sent, planned = spent", async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { upload: { concurrency: 4, requestsPerSecond: 1000 } },
    });
    ws.configure({
      target: { kind: 'remote', baseUrl: suite.proxy.url, apiKey: ds.apiKey, plan: 'basic', uploadCost: { includedMiB: 0 } },
    });
    const MIB = 1024 * 1024;
    for (let i = 0; i < 3; i++) ws.write(`big${i}.txt`, `line ${i}\n`.repeat(Math.ceil((1.2 * MIB) / 7)));
    ws.write('small.md', '# small\n');
    // The hosted formula: 5 + 1 per started MiB.
    suite.proxy.setHooks({
      onResponse: (req, res) => {
        if (!isUpload(req) || res.status !== 201) return 'relay';
        const body = JSON.parse(res.body.toString()) as { size: number };
        res.body = Buffer.from(JSON.stringify({ ...body, credits_charged: 5 + Math.ceil(body.size / MIB) }));
        return 'relay';
      },
    });

    const plan = await ws.runJson('plan');
    const run = await ws.runJson('sync');
    suite.proxy.setHooks({});

    expect(plan.report.summary).toMatchObject({ uploaded: 4, creditsPlanned: 3 * 7 + 6 });
    expect(run.code).toBe(0);
    expect(run.stderr).not.toMatch(/stopped spending/);
    expect(run.report.summary).toMatchObject({ uploaded: 4, deferred: 0, creditsPlanned: 27, creditsSpent: 27 });
  });
});
