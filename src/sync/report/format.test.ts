import { describe, expect, it } from 'vitest';
import { fakeBudget, fakeObservation, fakeRun, fakeState, planInput } from '../../../test/helpers/plan-fakes.js';
import { MIB } from '../../shared/plans.js';
import { planSync } from '../planner/plan-sync.js';
import { formatPlan, formatPlanChunks, MAX_UNSUPPORTED_LISTED } from './format-plan.js';
import { formatRun, formatRunChunks, MAX_UPLOADED_LISTED } from './format-run.js';

function samplePlan() {
  const observation = fakeObservation()
    .file('a.md', { size: 6 * MIB })
    .file('same.md')
    .file('docs/huge.csv', { size: 120 * MIB + 314_573 })
    .file('later.md')
    .build();
  const tracked = fakeState().tracked('same.md').tracked('gone.md').build();
  return planSync(planInput({ observation, tracked, budget: fakeBudget({ run: 10 }) }));
}

describe('formatPlan', () => {
  it('prints aligned lines (action, credits, path, reason), hides unchanged files, then totals, budget and reindex', () => {
    const text = formatPlan(samplePlan());

    expect(text.split('\n')).toEqual([
      'defer:over-budget  0  a.md           would exceed maxCreditsPerRun (5 + 6 > 10); upload (new file) waits for the next run',
      "skip:too-large     0  docs/huge.csv  over the basic plan's 100 MB limit (file is 120.3 MB)",
      'deleted            0  gone.md        removed locally; the remote copy remains (the API has no delete)',
      'upload             5  later.md       new file',
      '(1 unchanged file not listed)',
      '',
      '1 to upload, 1 unchanged, 0 renamed, 2 skipped, 1 deferred, 0 failed; 5 credits planned',
      'budget (used + this plan of cap): run 0 + 5 of 10, day 0 + 5 of 1,000,000, month 0 + 5 of 1,000,000',
      'reindex: not needed: 1 changed file, fewer than reindex.minChangedFiles (20)',
    ]);
  });

  it('lists unchanged files on request and prefixes the source when there are several', () => {
    const observation = fakeObservation(['a', 'b']).file('x.md', { source: 'a' }).file('y.md', { source: 'b' }).build();
    const tracked = fakeState(true).tracked('x.md', { source: 'a' }).build();

    const text = formatPlan(planSync(planInput({ observation, tracked, multiSource: true })), { showUnchanged: true });

    expect(text.split('\n').slice(0, 2)).toEqual([
      'skip:unchanged  0  a/x.md  unchanged since last sync',
      'upload          5  b/y.md  new file',
    ]);
  });

  it('counts unsupported files by type instead of listing them when there are more than MAX_UNSUPPORTED_LISTED; --all lists them', () => {
    let builder = fakeObservation().file('keep.md').file('same.md');
    for (let i = 0; i < MAX_UNSUPPORTED_LISTED; i++) builder = builder.skipped(`img/${i}.png`, 'unsupported', { detail: '.png' });
    builder = builder.skipped('Makefile', 'unsupported', { detail: 'no extension' }).skipped('b.PDF', 'unsupported', { detail: '.pdf' });
    builder = builder.skipped('c.pdf', 'unsupported', { detail: '.pdf' }).skipped('.env', 'secret', { detail: 'secret' });
    const plan = planSync(planInput({ observation: builder.build(), tracked: fakeState().tracked('same.md').build() }));

    const lines = formatPlan(plan).split('\n');
    const everything = formatPlan(plan, { showUnchanged: true }).split('\n');

    expect(lines.filter((l) => l.startsWith('skip:unsupported'))).toEqual([]);
    expect(lines).toContain(
      `(${MAX_UNSUPPORTED_LISTED + 3} unsupported files not listed: ${MAX_UNSUPPORTED_LISTED} .png, 2 .pdf, 1 with no extension; --all lists them)`,
    );
    expect(lines.some((l) => l.startsWith('skip:secret') && l.includes('.env'))).toBe(true);
    expect(lines.some((l) => l.startsWith('upload') && l.includes('keep.md'))).toBe(true);
    // The unchanged file is counted apart from the folded unsupported ones.
    expect(lines).toContain('(1 unchanged file not listed)');
    expect(lines.some((l) => l.includes('same.md'))).toBe(false);
    expect(everything.filter((l) => l.startsWith('skip:unsupported'))).toHaveLength(MAX_UNSUPPORTED_LISTED + 3);
  });

  it('lists a few unsupported files one by one', () => {
    const plan = planSync(planInput({ observation: fakeObservation().skipped('notes.rtf', 'unsupported', { detail: '.rtf' }).build() }));

    expect(formatPlan(plan).split('\n')[0]).toMatch(/^skip:unsupported {2}0 {2}notes\.rtf/);
  });

  it('says when there is nothing to sync', () => {
    expect(formatPlan(planSync(planInput())).split('\n')[0]).toBe('nothing to sync');
  });
});

describe('formatRun', () => {
  it('prints outcome, action, credits charged, path and the error of failed items, then totals', () => {
    const run = fakeRun(samplePlan(), (i) => (i.path === 'later.md' ? '500 internal' : null));

    const lines = formatRun(run).split('\n');

    expect(lines).toContain('failed  upload             0  later.md       new file: 500 internal');
    expect(lines).toContain(
      'done    deleted            0  gone.md        removed locally; the remote copy remains (the API has no delete)',
    );
    expect(lines.at(-2)).toBe('0 uploaded, 1 unchanged, 0 renamed, 2 skipped, 1 deferred, 1 failed; 0 credits spent (5 planned)');
    expect(lines.at(-1)).toBe('reindex: not attempted: 1 changed file, fewer than reindex.minChangedFiles (20)');
  });
});

describe('the text report of a run that uploaded many files', () => {
  const runOf = (files: number) => {
    let builder = fakeObservation().file('broken.md');
    for (let i = 0; i < files; i++) builder = builder.file(`docs/${i}.md`);
    return fakeRun(planSync(planInput({ observation: builder.build() })), (i) => (i.path === 'broken.md' ? '500 internal' : null));
  };
  const uploadLines = (text: string) => text.split('\n').filter((l) => l.startsWith('done    upload'));

  it('counts the files uploaded past MAX_UPLOADED_LISTED instead of a line each; failures are still listed', () => {
    const text = formatRun(runOf(MAX_UPLOADED_LISTED + 1));

    expect(uploadLines(text)).toEqual([]);
    expect(text).toContain(`(${MAX_UPLOADED_LISTED + 1} files uploaded not listed; --all or --json lists them)`);
    expect(text.split('\n')).toContain('failed  upload  0  broken.md  new file: 500 internal');
    expect(text).toContain(`${MAX_UPLOADED_LISTED + 1} uploaded,`);
  });

  it('lists each file uploaded up to MAX_UPLOADED_LISTED, and all of them with --all', () => {
    expect(uploadLines(formatRun(runOf(MAX_UPLOADED_LISTED)))).toHaveLength(MAX_UPLOADED_LISTED);
    expect(formatRun(runOf(MAX_UPLOADED_LISTED))).not.toContain('uploaded not listed');
    expect(uploadLines(formatRun(runOf(MAX_UPLOADED_LISTED + 1), { showUnchanged: true }))).toHaveLength(MAX_UPLOADED_LISTED + 1);
  });
});

describe('the text report of a large plan', () => {
  it('comes in chunks of at most 512 lines, aligned over all of them, that make formatPlan and formatRun with a final newline', () => {
    let builder = fakeObservation().file('a-much-longer-name-than-the-rest/of/the/tree.md', { size: 40 << 20 });
    for (let i = 0; i < 1500; i++) builder = builder.file(`docs/${i}.md`);
    const plan = planSync(planInput({ observation: builder.build() }));
    const run = fakeRun(plan, (i) => (i.path === 'docs/7.md' ? 'timed out' : null));

    const chunks = [...formatPlanChunks(plan)];
    const runChunks = [...formatRunChunks(run)];

    expect(chunks.length).toBe(4);
    expect(chunks.every((c) => c.endsWith('\n') && c.split('\n').length - 1 <= 512)).toBe(true);
    expect(chunks.join('')).toBe(`${formatPlan(plan)}\n`);
    expect(runChunks.join('')).toBe(`${formatRun(run)}\n`);
    // The widest path, in the first chunk, sets the column for the lines of the last one.
    const last = (chunks[2] as string).split('\n')[0] as string;
    expect(last.indexOf('new file')).toBe((chunks[0] as string).split('\n')[0]?.indexOf('new file'));
  });
});
