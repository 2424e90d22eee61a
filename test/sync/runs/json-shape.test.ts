import { describe, expect, it } from 'vitest';
import { createWorkspace, type JsonItem, type JsonReport } from '../../helpers/e2e-workspace.js';
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
    expect(item).toMatchObject({
      source: expect.any(String),
      path: expect.any(String),
      action: expect.any(String),
      reason: expect.any(String),
      credits: expect.any(Number),
    });
    expect(item.reason.length).toBeGreaterThan(0);
  }
}

/**
 * The summary a plan's or a run's items add up to, as README.md describes the counts: an upload or
 * reprocess is uploaded (in a run: when it was done; deferred when not run; else failed), unchanged,
 * renamed, deferred (defer:*), failed (skip:remote-failed), everything else skipped. Credits: planned
 * (a run item's `creditsPlanned`, a plan item's `credits`) and charged (a run item's `credits`).
 * Made from the items alone, so that a count the summary gets wrong, or an item the report drops or
 * repeats, shows. (No item here triggers a reindex, whose credits only the summary holds.)
 */
function countsOf(items: readonly JsonItem[], run: boolean): JsonReport['summary'] {
  const counts = { uploaded: 0, unchanged: 0, renamed: 0, skipped: 0, deferred: 0, failed: 0, creditsPlanned: 0, creditsSpent: 0 };
  for (const item of items) {
    const { action } = item;
    if (action === 'upload' || action === 'reprocess') {
      const outcome = run ? item.outcome : 'done';
      counts[outcome === 'done' ? 'uploaded' : outcome === 'not-run' ? 'deferred' : 'failed'] += 1;
    } else if (action === 'skip:unchanged') counts.unchanged += 1;
    else if (action === 'rename') counts.renamed += 1;
    else if (action.startsWith('defer:')) counts.deferred += 1;
    else if (action === 'skip:remote-failed') counts.failed += 1;
    else counts.skipped += 1;
    counts.creditsPlanned += run ? (item.creditsPlanned as number) : item.credits;
    counts.creditsSpent += run ? item.credits : 0;
  }
  return counts;
}

describe('--json on plan, sync and status', () => {
  it('prints one document {summary, items}; for plan and sync the summary counts its items', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { budget: { maxCreditsPerRun: 10, maxCreditsPerDay: 1000, maxCreditsPerMonth: 1000 } },
    });
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
    expect(plan.report.summary).toEqual(countsOf(plan.report.items, false));
    expect(sync.report.summary).toEqual(countsOf(sync.report.items, true));
    expect(plan.report.summary).toEqual({
      uploaded: 2,
      unchanged: 0,
      renamed: 0,
      skipped: 2,
      deferred: 1,
      failed: 0,
      creditsPlanned: 10,
      creditsSpent: 0,
    });
    expect(sync.report.summary).toEqual({
      uploaded: 2,
      unchanged: 0,
      renamed: 0,
      skipped: 2,
      deferred: 1,
      failed: 0,
      creditsPlanned: 10,
      creditsSpent: 10,
    });
    expect(sync.report.items.map((i) => [i.path, i.action, i.credits])).toEqual([
      ['.env', 'skip:secret', 0],
      ['a.md', 'upload', 5],
      ['b.md', 'upload', 5],
      ['c.md', 'defer:over-budget', 0],
      ['image.png', 'skip:unsupported', 0],
    ]);
    // status: the last run's summary, and the files tracked now (not that run's items).
    expect(status.report.summary).toEqual(sync.report.summary);
    expect(status.report.items.map((i) => [i.path, i.action, i.credits]).sort()).toEqual([
      ['a.md', 'upload', 0],
      ['b.md', 'upload', 0],
    ]);
  });
});
