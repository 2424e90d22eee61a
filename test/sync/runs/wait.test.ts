import { describe, expect, it } from 'vitest';
import { createWorkspace, itemOf } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import type { FaultHooks } from '../../helpers/fault-proxy.js';

// Only counts calls here: every request is forwarded untouched.
const suite = useE2eSuite({ proxy: true });

const isReprocess = (r: { method: string; url: string }): boolean => r.method === 'POST' && /\/files\/\d+\/reprocess/.test(r.url);

/**
 * Rewrites the code at the start of each failed file's `error` in the listings the client reads:
 * `null` drops it, as the hosted service writes its errors (no code); a string puts that code instead.
 */
function errorCodesAs(code: string | null): FaultHooks {
  return {
    onResponse: (req, res) => {
      if (req.method !== 'GET' || !/\/files\/?(\?|$)/.test(req.url) || res.status !== 200) return 'relay';
      const listing = JSON.parse(res.body.toString()) as { files: { error?: string | null }[] };
      for (const f of listing.files) {
        if (typeof f.error === 'string') f.error = `${code === null ? '' : `${code}: `}${f.error.replace(/^[a-z_]+: /, '')}`;
      }
      res.body = Buffer.from(JSON.stringify(listing));
      return 'relay';
    },
  };
}

describe('kbsync sync --wait', () => {
  it("waits until processed; a file failed with an error of no known code (the hosted service's) is reprocessed maxReprocessAttempts times, then reported failed", async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 2 } },
    });
    ws.write('good.md', '# Good\nThis one parses.\n');
    ws.write('table.csv', 'a,b\n1,2\n');
    ws.write('bad.json', '{"unterminated": [1, 2,\n');
    const start = await ds.balance();
    suite.proxy.setHooks(errorCodesAs(null));

    const run = await ws.runJson('sync', '--wait', '--wait-timeout', '20');
    const status = await ws.runJson('status');
    const remote = new Map((await ds.files()).map((f) => [f.name, f]));
    const charged = start - (await ds.balance());

    expect(remote.get('good.md')?.status).toBe('processed');
    expect(remote.get('table.csv')?.status).toBe('processed');
    expect(remote.get('bad.json')?.status).toBe('failed');
    expect(itemOf(status.report, 'good.md').remoteStatus).toBe('processed');
    expect(itemOf(status.report, 'table.csv').remoteStatus).toBe('processed');
    expect(itemOf(status.report, 'bad.json').remoteStatus).toBe('failed');
    expect(suite.proxy.requests.filter(isReprocess)).toHaveLength(2);
    expect(charged).toBe(3 * 5 + 2 * 5);
    expect(run.code).toBe(1);
    // The reprocesses --wait sent count as planned: the report's planned and spent agree.
    expect(run.report.summary).toMatchObject({ uploaded: 2, failed: 1, creditsSpent: charged, creditsPlanned: charged });
    expect(itemOf(run.report, 'bad.json')).toMatchObject({ outcome: 'failed', credits: 15, creditsPlanned: 15 });
    expect(itemOf(run.report, 'bad.json').reason).toMatch(/; reprocessed 2 times after --wait \(5 credits each\)$/);
    expect(String(itemOf(run.report, 'bad.json').error)).toMatch(/remote processing failed: invalid JSON/);

    const later = await ws.runJson('sync');
    suite.proxy.setHooks({});

    expect(itemOf(later.report, 'bad.json')).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
    expect(later.code).toBe(1);
    expect(start - (await ds.balance())).toBe(charged);
    expect(suite.proxy.requests.filter(isReprocess)).toHaveLength(2);
  });

  it('--wait-timeout passes with a file still processing: the run says which, and exits 3; the file is not reported failed', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.proxy.url, apiKey: ds.apiKey });
    ws.write('quick.md', '# Quick\n');
    ws.write('slow.md', '# Slow\n');
    // The service finishes both at once; the proxy shows slow.md as still processing, for ever.
    suite.proxy.setHooks({
      onResponse: (req, res) => {
        if (req.method !== 'GET' || !/\/files\/?(\?|$)/.test(req.url) || res.status !== 200) return 'relay';
        const listing = JSON.parse(res.body.toString()) as { files: { name: string; status: string }[] };
        for (const f of listing.files) if (f.name === 'slow.md') f.status = 'processing';
        res.body = Buffer.from(JSON.stringify(listing));
        return 'relay';
      },
    });

    const run = await ws.runJson('sync', '--wait', '--wait-timeout', '1');
    suite.proxy.setHooks({});

    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/--wait gave up after 1 s: 1 file is still processing/);
    expect(itemOf(run.report, 'slow.md')).toMatchObject({ action: 'upload', outcome: 'done' });
    expect(itemOf(run.report, 'slow.md').reason).toMatch(/remote status still processing when --wait gave up$/);
    expect(itemOf(run.report, 'quick.md').reason).not.toMatch(/still/);
    expect(run.report.summary).toMatchObject({ uploaded: 2, failed: 0, creditsSpent: 10 });
  });

  it('a reprocess after --wait (of an `internal:` failure, one worth retrying) is admitted against the budget like any paid call: refused, it is not sent, and the failure says why', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: {
        upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 2 },
        budget: { maxCreditsPerRun: 10, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 },
      },
    });
    ws.write('good.md', '# Good\n');
    ws.write('bad.json', '{"unterminated": [1, 2,\n');
    const start = await ds.balance();
    const reprocessesBefore = suite.proxy.requests.filter(isReprocess).length;
    suite.proxy.setHooks(errorCodesAs('internal'));

    const run = await ws.runJson('sync', '--wait', '--wait-timeout', '20');
    suite.proxy.setHooks({});

    expect(run.code).toBe(1);
    expect(itemOf(run.report, 'bad.json')).toMatchObject({ outcome: 'failed', credits: 5, creditsPlanned: 5 });
    expect(String(itemOf(run.report, 'bad.json').error)).toMatch(
      /remote processing failed: internal: invalid JSON.*; reprocess not sent: would exceed maxCreditsPerRun \(10 \+ 5 > 10\)/,
    );
    expect(suite.proxy.requests.filter(isReprocess).length).toBe(reprocessesBefore);
    expect(start - (await ds.balance())).toBe(10);
  });

  it("without --wait, the next sync learns what the service made of the last one's uploads: a copy it failed to process is reprocessed then", async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 1 } },
    });
    ws.write('good.md', '# Good\n');
    ws.write('bad.json', '{"unterminated": [1, 2,\n');
    const first = await ws.runJson('sync');
    expect(first.report.summary).toMatchObject({ uploaded: 2, failed: 0 });
    // The service processes in the background: wait until it has settled both (the test's own polling).
    for (let i = 0; i < 200 && (await ds.files()).some((f) => f.status !== 'processed' && f.status !== 'failed'); i++)
      await new Promise((r) => setTimeout(r, 25));
    const reprocessesBefore = suite.proxy.requests.filter(isReprocess).length;
    suite.proxy.setHooks(errorCodesAs(null));

    const second = await ws.runJson('sync');
    suite.proxy.setHooks({});

    expect(itemOf(second.report, 'bad.json')).toMatchObject({ action: 'reprocess', outcome: 'done', credits: 5 });
    expect(itemOf(second.report, 'good.md')).toMatchObject({ action: 'skip:unchanged' });
    expect(itemOf(second.report, 'good.md').reason).toBe('unchanged since last sync');
    expect(suite.proxy.requests.filter(isReprocess).length).toBe(reprocessesBefore + 1);

    // Everything settled: the run after lists nothing (a settled state plans offline).
    for (let i = 0; i < 200 && (await ds.files()).some((f) => f.status !== 'processed' && f.status !== 'failed'); i++)
      await new Promise((r) => setTimeout(r, 25));
    const third = await ws.runJson('sync');
    const listingsBefore = suite.proxy.requests.filter((r) => r.method === 'GET' && /\/files\/?(\?|$)/.test(r.url)).length;
    const fourth = await ws.runJson('sync');
    const listingsAfter = suite.proxy.requests.filter((r) => r.method === 'GET' && /\/files\/?(\?|$)/.test(r.url)).length;

    expect(itemOf(third.report, 'bad.json')).toMatchObject({ action: 'skip:remote-failed' });
    expect(fourth.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });
    expect(listingsAfter).toBe(listingsBefore);
  });

  it('without --wait, a copy the service failed with `parse_failed:` is not reprocessed by the next sync: planned and spent 0, the reason says what to do', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 2 } },
    });
    ws.write('bad.json', '{"unterminated": [1, 2,\n');
    await ws.runJson('sync');
    for (let i = 0; i < 200 && (await ds.files()).some((f) => f.status !== 'processed' && f.status !== 'failed'); i++)
      await new Promise((r) => setTimeout(r, 25));
    const start = await ds.balance();
    const reprocessesBefore = suite.proxy.requests.filter(isReprocess).length;

    const second = await ws.runJson('sync');
    const plan = await ws.runJson('plan');

    for (const report of [second.report, plan.report]) {
      expect(itemOf(report, 'bad.json')).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
      expect(itemOf(report, 'bad.json').reason).toMatch(
        /^remote processing failed: parse_failed: invalid JSON.*; not reprocessed: the service says the same file would fail again \(fix the file/,
      );
      expect(report.summary).toMatchObject({ failed: 1, creditsPlanned: 0 });
    }
    expect(second.report.summary.creditsSpent).toBe(0);
    expect(suite.proxy.requests.filter(isReprocess).length).toBe(reprocessesBefore);
    expect(await ds.balance()).toBe(start);
  });
});
