import { describe, expect, it } from 'vitest';
import { fakeObservation, fakeRun, fakeState, planInput } from '../../../test/helpers/plan-fakes.js';
import { planSync } from '../planner/plan-sync.js';
import type { RunResult } from '../types.js';
import { summarize } from '../planner/totals.js';
import { jsonReportChunks, toJsonReport } from './json-report.js';

function samplePlan() {
  const observation = fakeObservation()
    .file('a.md')
    .file('b.md')
    .file('new.md', { content: 'X' })
    .skipped('x.exe', 'unsupported', { detail: '.exe' })
    .build();
  const tracked = fakeState().tracked('b.md').tracked('old.md', { content: 'X', remoteId: '7' }).build();
  return planSync(planInput({ observation, tracked }));
}

describe('toJsonReport', () => {
  it('a plan: the summary has exactly the eight agreed keys, in order, and each item starts with the five agreed fields', () => {
    const report = toJsonReport(samplePlan());

    expect(Object.keys(report)).toEqual(['summary', 'items']);
    expect(Object.keys(report.summary)).toEqual([
      'uploaded',
      'unchanged',
      'renamed',
      'skipped',
      'deferred',
      'failed',
      'creditsPlanned',
      'creditsSpent',
    ]);
    expect(report.summary).toEqual({
      uploaded: 1,
      unchanged: 1,
      renamed: 1,
      skipped: 1,
      deferred: 0,
      failed: 0,
      creditsPlanned: 5,
      creditsSpent: 0,
    });
    for (const item of report.items) expect(Object.keys(item).slice(0, 5)).toEqual(['source', 'path', 'action', 'reason', 'credits']);
    expect(report.items.map((i) => [i.path, i.action, i.credits])).toEqual([
      ['a.md', 'upload', 5],
      ['b.md', 'skip:unchanged', 0],
      ['new.md', 'rename', 0],
      ['x.exe', 'skip:unsupported', 0],
    ]);
    expect(report.items[2]).toMatchObject({ renamedFrom: 'docs/old.md', remoteName: 'old.md', remoteId: '7' });
  });

  it('round-trips through JSON.stringify unchanged (no undefined, no Map, no Date)', () => {
    const report = toJsonReport(samplePlan());

    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it('a run: items carry the credits charged, the outcome and the error; the summary counts by outcome', () => {
    const run = fakeRun(samplePlan(), (i) => (i.action === 'upload' ? '413 file_too_large' : null));

    const report = toJsonReport(run);

    expect(report.summary).toEqual({
      uploaded: 0,
      unchanged: 1,
      renamed: 1,
      skipped: 1,
      deferred: 0,
      failed: 1,
      creditsPlanned: 5,
      creditsSpent: 0,
    });
    expect(report.items[0]).toMatchObject({
      path: 'a.md',
      action: 'upload',
      credits: 0,
      creditsPlanned: 5,
      outcome: 'failed',
      error: '413 file_too_large',
    });
  });
});

/** A run whose totals carry a key beyond the agreed eight (the report must leave it out). */
function sampleRun(): RunResult {
  const run = fakeRun(samplePlan(), (i) => (i.action === 'upload' ? '413 "file_too_large"\n' : null));
  return { ...run, totals: { ...run.totals, extra: 1 } as RunResult['totals'] };
}

describe('jsonReportChunks', () => {
  const text = (result: Parameters<typeof jsonReportChunks>[0]): string => [...jsonReportChunks(result)].join('');

  it.each([
    ['a plan', samplePlan],
    ['a run', sampleRun],
  ])('%s: the same document as toJsonReport, keys in the same order, one item per line', (_, make) => {
    const result = make();

    const written = text(result);

    expect(JSON.stringify(JSON.parse(written))).toBe(JSON.stringify(toJsonReport(result)));
    const lines = written.split('\n');
    expect(lines.filter((l) => l.startsWith('    {"source":'))).toHaveLength(result.items.length);
    expect(written.endsWith(']\n}\n')).toBe(true);
  });

  it('escapes what JSON must escape in paths and reasons (quotes, backslashes, control characters, non-ASCII)', () => {
    const observation = fakeObservation().file('quo"te\\back.md').file('line\nbreak\t.md').file('naïve-日本.md').build();
    const plan = planSync(planInput({ observation, tracked: fakeState().build() }));

    const parsed = JSON.parse(text(plan)) as ReturnType<typeof toJsonReport>;

    expect(parsed).toEqual(toJsonReport(plan));
    expect(parsed.items.map((i) => i.path).sort()).toEqual(['line\nbreak\t.md', 'naïve-日本.md', 'quo"te\\back.md']);
  });

  it('an empty plan is a valid document with no items', () => {
    const plan = planSync(planInput({ observation: fakeObservation().build(), tracked: fakeState().build() }));

    expect(JSON.parse(text(plan))).toEqual({ summary: toJsonReport(plan).summary, items: [] });
  });

  it('a plan of many items comes in several chunks that join into one document', () => {
    let builder = fakeObservation();
    for (let i = 0; i < 5000; i++) builder = builder.file(`doc-${String(i).padStart(5, '0')}.md`);
    const plan = planSync(planInput({ observation: builder.build(), tracked: fakeState().build() }));

    const chunks = [...jsonReportChunks(plan)];

    expect(chunks.length).toBeGreaterThan(3);
    expect((JSON.parse(chunks.join('')) as { items: unknown[] }).items).toHaveLength(5000);
  });
});

describe('summarize (plan and run totals)', () => {
  it.each([
    ['upload', undefined, 'uploaded'],
    ['upload', 'done', 'uploaded'],
    ['reprocess', 'done', 'uploaded'],
    ['upload', 'failed', 'failed'],
    ['upload', 'unknown', 'failed'],
    ['upload', 'not-run', 'deferred'],
    ['skip:remote-failed', undefined, 'failed'],
    ['deleted', undefined, 'skipped'],
    ['defer:changing', undefined, 'deferred'],
    ['rename', 'done', 'renamed'],
  ] as const)('%s with outcome %s counts as %s', (action, outcome, bucket) => {
    const item = {
      source: 's',
      path: 'p',
      action,
      reason: '',
      credits: 5,
      size: 1,
      sha256: null,
      remoteName: 'p',
      remoteId: null,
      outcome,
      creditsCharged: outcome === 'done' ? 5 : 0,
    };

    const totals = summarize([item], { credits: 2, creditsCharged: 0 });

    expect(totals[bucket]).toBe(1);
    expect(totals.uploaded + totals.unchanged + totals.renamed + totals.skipped + totals.deferred + totals.failed).toBe(1);
    expect(totals.creditsPlanned).toBe(7);
    expect(totals.creditsSpent).toBe(outcome === 'done' ? 5 : 0);
  });
});
