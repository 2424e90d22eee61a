import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCiReportTargets, writeCiReports, type CiCase, type CiReport } from '../../src/cli/ci-report/index.js';
import { ciJunit } from '../../src/cli/ci-report/junit.js';
import { ciMarkdown, MAX_MD_ROWS } from '../../src/cli/ci-report/markdown.js';
import { junitSchemaErrors, parseJunit, parseMarkdown } from '../helpers/ci-reports.js';
import { useTempDirs } from './helpers.js';

/** Names and messages Markdown and XML would read as markup if they were not escaped. */
const HOSTILE = 'we|ird *bold* _em_ [link](x) <b>&amp; `code` # ~del~ \\ "q" \'a\'';

function report(cases: CiCase[], o: Partial<CiReport> = {}): CiReport {
  return {
    title: 'kbsync sync',
    counts: [
      { label: 'uploaded', value: 3 },
      { label: 'skipped', value: 2 },
      { label: 'failed', value: 2 },
    ],
    credits: { spent: 15, reserved: 5, left: 985 },
    notes: ['stopped spending: over budget'],
    cases,
    notListed: ['12 unchanged files not listed'],
    startedAt: '2026-01-02T03:04:05.678Z',
    durationMs: 1234,
    ...o,
  };
}

const CASES: CiCase[] = [
  { suite: 'docs', name: 'a.md', status: 'passed', message: 'upload: new file; 5 credits' },
  { suite: 'docs', name: HOSTILE, status: 'failed', message: `upload: new file: ${HOSTILE}` },
  { suite: 'docs', name: 'lost.md', status: 'error', message: 'upload: new file: unknown outcome' },
  { suite: 'docs', name: 'notes.rtf', status: 'skipped', message: 'unsupported file type: .rtf' },
  { suite: 'docs', name: 'big.pdf', status: 'skipped', message: 'over the budget\nof the run' },
];

describe('Markdown report', () => {
  it('has the title, counts, credits, notes, a failures table and a skipped-with-reason table; every cell reads as written', () => {
    const md = parseMarkdown(ciMarkdown(report(CASES)));

    expect(md.headings).toEqual(['kbsync sync', 'Failures (2)', 'Skipped (2)']);
    expect(md.paragraphs[0]).toBe('<strong>2 failed.</strong>');
    expect(md.tables[0]).toEqual({ header: ['uploaded', 'skipped', 'failed'], rows: [['3', '2', '2']] });
    expect(md.tables[1]).toEqual({ header: ['credits spent', 'reserved', 'left'], rows: [['15', '5', '985']] });
    expect(md.list).toEqual(['stopped spending: over budget', '12 unchanged files not listed']);
    expect(md.tables[2]).toEqual({
      header: ['name', 'status', 'message'],
      rows: [
        [HOSTILE, 'failed', `upload: new file: ${HOSTILE}`],
        ['lost.md', 'error', 'upload: new file: unknown outcome'],
      ],
    });
    // A line break in a reason stays in its cell.
    expect(md.tables[3]).toEqual({
      header: ['name', 'reason'],
      rows: [
        ['notes.rtf', 'unsupported file type: .rtf'],
        ['big.pdf', 'over the budget of the run'],
      ],
    });
  });

  it('with no failure says so, shows "unknown" for a balance not known, and names the suite when there are several', () => {
    const cases: CiCase[] = [
      { suite: 'docs', name: 'a.md', status: 'skipped', message: 'ignored' },
      { suite: 'wiki', name: 'a.md', status: 'skipped', message: 'secret' },
    ];
    const md = parseMarkdown(ciMarkdown(report(cases, { credits: { spent: 0, reserved: 0, left: null }, notes: [], notListed: [] })));

    expect(md.paragraphs[0]).toBe('No failures.');
    expect(md.headings).toEqual(['kbsync sync', 'Skipped (2)']);
    expect(md.tables[1]?.rows).toEqual([['0', '0', 'unknown']]);
    expect(md.tables[2]).toEqual({
      header: ['suite', 'name', 'reason'],
      rows: [
        ['docs', 'a.md', 'ignored'],
        ['wiki', 'a.md', 'secret'],
      ],
    });
    expect(md.list).toEqual([]);
  });

  it(`lists at most ${MAX_MD_ROWS} rows a table and says how many more there are`, () => {
    const many: CiCase[] = Array.from({ length: MAX_MD_ROWS + 5 }, (_, i) => ({
      suite: 'docs',
      name: `f${i}.png`,
      status: 'skipped',
      message: 'unsupported',
    }));
    const md = parseMarkdown(ciMarkdown(report(many)));

    expect(md.headings).toContain(`Skipped (${MAX_MD_ROWS + 5})`);
    expect(md.tables[2]?.rows.length).toBe(MAX_MD_ROWS);
    expect(md.paragraphs.at(-1)).toBe('… and 5 more (the JUnit report lists every case).');
  });
});

describe('JUnit report', () => {
  it('is valid against the JUnit schema, and reads back: one testcase per case, counts per suite and in all, names and messages as given', async () => {
    const xml = ciJunit(report([...CASES, { suite: 'reindex', name: 'reindex', status: 'passed', message: 'done; 2 credits' }]));

    expect(await junitSchemaErrors(xml)).toEqual([]);
    const { root, suites, cases } = parseJunit(xml);
    expect(root).toMatchObject({ name: 'kbsync sync', tests: '6', failures: '1', errors: '1', time: '1.234' });
    expect(suites.map((s) => [s.name, s.tests, s.failures, s.errors, s.skipped, s.timestamp])).toEqual([
      ['docs', '5', '1', '1', '2', '2026-01-02T03:04:05.678Z'],
      ['reindex', '1', '0', '0', '0', '2026-01-02T03:04:05.678Z'],
    ]);
    expect(cases.map((c) => [c.suite, c.classname, c.name, c.outcome, c.message ?? c.systemOut])).toEqual([
      ['docs', 'docs', 'a.md', 'passed', 'upload: new file; 5 credits'],
      ['docs', 'docs', HOSTILE, 'failure', `upload: new file: ${HOSTILE}`],
      ['docs', 'docs', 'lost.md', 'error', 'upload: new file: unknown outcome'],
      ['docs', 'docs', 'notes.rtf', 'skipped', 'unsupported file type: .rtf'],
      ['docs', 'docs', 'big.pdf', 'skipped', 'over the budget\nof the run'],
      ['reindex', 'reindex', 'reindex', 'passed', 'done; 2 credits'],
    ]);
    // Counts and credits ride on the first suite as properties; notes as its system-out.
    const props = (suites[0]?.properties as { property: { name: string; value: string }[] }).property;
    expect(props.map((p) => [p.name, p.value])).toEqual([
      ['uploaded', '3'],
      ['skipped', '2'],
      ['failed', '2'],
      ['credits.spent', '15'],
      ['credits.reserved', '5'],
      ['credits.left', '985'],
    ]);
    expect(suites[0]?.['system-out']).toBe('stopped spending: over budget\n12 unchanged files not listed');
  });

  it('characters XML cannot hold (controls, a lone surrogate) become U+FFFD, and the document stays valid', async () => {
    const xml = ciJunit(report([{ suite: 'docs', name: 'a\u0001b\u001bc\uD800.md', status: 'failed', message: 'bad\u0000byte' }]));

    expect(await junitSchemaErrors(xml)).toEqual([]);
    expect(parseJunit(xml).cases.map((c) => [c.name, c.message])).toEqual([['a\uFFFDb\uFFFDc\uFFFD.md', 'bad\uFFFDbyte']]);
  });

  it('a report without cases is one empty suite named after it, still valid', async () => {
    const xml = ciJunit(report([], { credits: null, counts: [], notes: [], notListed: [] }));

    expect(await junitSchemaErrors(xml)).toEqual([]);
    expect(parseJunit(xml).suites.map((s) => [s.name, s.tests])).toEqual([['kbsync sync', '0']]);
  });

  it('the schema check is no formality: a suite without its tests count, or a case with two outcomes, is refused', async () => {
    const xml = ciJunit(report(CASES));

    expect(xml).toContain('<testsuite name="docs" tests="5"');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    expect(await junitSchemaErrors(xml.replace('<testsuite name="docs" tests="5"', '<testsuite name="docs"'))).not.toEqual([]);
    expect(await junitSchemaErrors(xml.replace('<skipped message="unsupported file type: .rtf"/>', '<skipped/><failure/>'))).not.toEqual(
      [],
    );
  });
});

describe('writeCiReports', () => {
  const tempDir = useTempDirs();

  it('writes --report-md and --junit (folders made), and appends the Markdown to $GITHUB_STEP_SUMMARY after what was there', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'summary.md'), '# build\n');
    const r = report(CASES);

    await writeCiReports({ reportMd: 'out/r.md', junit: 'out/deep/j.xml' }, r, {
      cwd: dir,
      env: { GITHUB_STEP_SUMMARY: join(dir, 'summary.md') },
    });

    expect(readFileSync(join(dir, 'out/r.md'), 'utf8')).toBe(ciMarkdown(r));
    expect(readFileSync(join(dir, 'out/deep/j.xml'), 'utf8')).toBe(ciJunit(r));
    expect(readFileSync(join(dir, 'summary.md'), 'utf8')).toBe(`# build\n\n${ciMarkdown(r)}`);
  });

  it('--report-md naming the step summary itself appends once; without --report-md the summary is left alone', async () => {
    const dir = tempDir();
    const summary = join(dir, 'summary.md');
    writeFileSync(summary, '# build\n');
    const r = report(CASES);

    await writeCiReports({ reportMd: 'summary.md' }, r, { cwd: dir, env: { GITHUB_STEP_SUMMARY: summary } });
    await writeCiReports({ junit: 'j.xml' }, r, { cwd: dir, env: { GITHUB_STEP_SUMMARY: summary } });

    expect(readFileSync(summary, 'utf8')).toBe(`# build\n\n${ciMarkdown(r)}`);
  });

  it('a report path that cannot be written is refused before anything runs, naming the option and the path', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    mkdirSync(join(dir, 'folder'));

    await expect(checkCiReportTargets({ junit: 'file/j.xml' }, { cwd: dir, env: {} })).rejects.toThrow(
      `--junit: cannot write ${join(dir, 'file/j.xml')}`,
    );
    await expect(checkCiReportTargets({ reportMd: 'folder' }, { cwd: dir, env: {} })).rejects.toThrow(
      /--report-md: cannot write .*folder: it is a folder/,
    );
    await expect(
      checkCiReportTargets({ reportMd: 'r.md' }, { cwd: dir, env: { GITHUB_STEP_SUMMARY: join(dir, 'file/s.md') } }),
    ).rejects.toThrow(/GITHUB_STEP_SUMMARY: cannot write/);
    await expect(checkCiReportTargets({ reportMd: 'ok/r.md', junit: 'ok/j.xml' }, { cwd: dir, env: {} })).resolves.toBeUndefined();
  });
});
