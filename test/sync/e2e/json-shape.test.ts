import { describe, expect, it } from 'vitest';
import { createWorkspace, type JsonReport } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();

const SUMMARY_KEYS = ['uploaded', 'unchanged', 'renamed', 'skipped', 'deferred', 'failed', 'creditsPlanned', 'creditsSpent'];

/** Checks the agreed shape: `summary` with exactly the eight counts, `items` each with the five fields, typed. */
function expectReportShape(doc: JsonReport): void {
  expect(Object.keys(doc.summary)).toEqual(SUMMARY_KEYS);
  for (const key of SUMMARY_KEYS) expect(Number.isInteger(doc.summary[key as keyof JsonReport['summary']]), key).toBe(true);
  expect(Array.isArray(doc.items)).toBe(true);
  for (const item of doc.items) {
    expect(Object.keys(item).slice(0, 5)).toEqual(['source', 'path', 'action', 'reason', 'credits']);
    expect(item).toMatchObject({ source: expect.any(String), path: expect.any(String), action: expect.any(String), reason: expect.any(String), credits: expect.any(Number) });
    expect(item.reason.length).toBeGreaterThan(0);
  }
}

describe('--json on plan, sync and status', () => {
  it('prints one document {summary, items} whose counts match its items', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { budget: { maxCreditsPerRun: 10, maxCreditsPerDay: 1000, maxCreditsPerMonth: 1000 } } });
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    ws.write('c.md', '# C\n');
    ws.write('image.png', 'png');
    ws.write('.env', 'X=1\n');

    const plan = await ws.runJson('plan');
    const sync = await ws.runJson('sync');
    const status = await ws.runJson('status');

    for (const run of [plan, sync]) {
      expect(Object.keys(run.report)).toEqual(['summary', 'items']);
      expectReportShape(run.report);
      expect(run.stdout.trim().startsWith('{')).toBe(true);
      expect(run.stdout.trim().endsWith('}')).toBe(true);
    }
    expect(Object.keys(status.report).slice(0, 2)).toEqual(['summary', 'items']);
    expectReportShape(status.report);
    expect(plan.report.summary).toEqual({ uploaded: 2, unchanged: 0, renamed: 0, skipped: 2, deferred: 1, failed: 0, creditsPlanned: 10, creditsSpent: 0 });
    expect(sync.report.summary).toEqual({ uploaded: 2, unchanged: 0, renamed: 0, skipped: 2, deferred: 1, failed: 0, creditsPlanned: 10, creditsSpent: 10 });
    expect(sync.report.items.map((i) => [i.path, i.action, i.credits])).toEqual([
      ['.env', 'skip:secret', 0],
      ['a.md', 'upload', 5],
      ['b.md', 'upload', 5],
      ['c.md', 'defer:over-budget', 0],
      ['image.png', 'skip:unsupported', 0],
    ]);
    expect(status.report.summary).toEqual(sync.report.summary);
    expect(status.report.items.map((i) => [i.path, i.action, i.credits]).sort()).toEqual([['a.md', 'upload', 0], ['b.md', 'upload', 0]]);
  });
});
