import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ensureDist, KBSYNC_BIN } from '../../helpers/build-dist.js';
import { junitSchemaErrors, parseJunit, parseMarkdown } from '../../helpers/ci-reports.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });

/** A name Markdown and XML would read as markup if kbsync did not escape it. */
const WEIRD = 'we|ird *name* <b>&amp;.md';

/**
 * A workspace whose second sync has one of each: an unchanged file, uploads (one with a hostile name),
 * a file the service fails to process (bad JSON, failed after --wait), an unsupported file, and a file
 * deferred by the run's budget (the largest: admitted last).
 */
async function mixedWorkspace(): Promise<{ ws: Workspace; balance: () => Promise<number> }> {
  const ds = suite.svc.dataset({ credits: 1000 });
  const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
  ws.write('old.md', '# Old\n');
  // Processed before the next sync, whose reasons would otherwise say "(remote status: processing)".
  expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(0);
  ws.write('good.md', '# Good\n');
  ws.write(WEIRD, '# Weird\n');
  ws.write('bad.json', '{"unterminated": [1, 2,\n');
  ws.write('notes.rtf', '{\\rtf1 hi}');
  ws.write('zbig.md', `# Big\n${'x'.repeat(2000)}\n`);
  ws.configure({ budget: { maxCreditsPerRun: 15, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 } });
  return { ws, balance: () => ds.balance() };
}

describe('kbsync sync --report-md and --junit', () => {
  it('sync --report-md FILE --junit FILE: the Markdown has the counts, credits, failures and skipped files with their reasons; the JUnit one case per file action, valid against the schema', async () => {
    const { ws, balance } = await mixedWorkspace();

    const run = await ws.runJson('sync', '--wait', '--wait-timeout', '20', '--report-md', 'out/report.md', '--junit', 'out/junit.xml');

    expect(run.code).toBe(1);
    const s = run.report.summary;
    expect(s).toMatchObject({ uploaded: 2, unchanged: 1, skipped: 1, deferred: 1, failed: 1 });
    const md = parseMarkdown(readFileSync(join(ws.root, 'out/report.md'), 'utf8'));
    expect(md.headings).toEqual(['kbsync sync', 'Failures (1)', 'Skipped (2)']);
    expect(md.tables[0]).toEqual({
      header: ['uploaded', 'unchanged', 'renamed', 'skipped', 'deferred', 'failed'],
      rows: [[s.uploaded, s.unchanged, s.renamed, s.skipped, s.deferred, s.failed].map(String)],
    });
    expect(md.tables[1]).toEqual({
      header: ['credits spent', 'reserved', 'left'],
      rows: [[String(s.creditsSpent), '0', String(await balance())]],
    });
    expect(md.list).toEqual(['1 unchanged file not listed']);
    expect(md.tables[2]?.header).toEqual(['name', 'status', 'message']);
    expect(md.tables[2]?.rows.map((r) => r.slice(0, 2))).toEqual([['bad.json', 'failed']]);
    expect(md.tables[2]?.rows[0]?.[2]).toMatch(/^upload: new file: remote processing failed: parse_failed: invalid JSON/);
    expect(md.tables[3]?.header).toEqual(['name', 'reason']);
    expect(md.tables[3]?.rows.map((r) => r[0])).toEqual(['notes.rtf', 'zbig.md']);
    expect(md.tables[3]?.rows[0]?.[1]).toMatch(/^unsupported file type: \.rtf/);
    expect(md.tables[3]?.rows[1]?.[1]).toMatch(/maxCreditsPerRun/);

    const xml = readFileSync(join(ws.root, 'out/junit.xml'), 'utf8');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    const junit = parseJunit(xml);
    expect(junit.root).toMatchObject({ name: 'kbsync sync', tests: '5', failures: '1', errors: '0' });
    expect(junit.suites.map((x) => [x.name, x.tests, x.failures, x.skipped])).toEqual([['docs', '5', '1', '2']]);
    expect(junit.cases.map((c) => [c.name, c.outcome])).toEqual([
      ['bad.json', 'failure'],
      ['good.md', 'passed'],
      ['notes.rtf', 'skipped'],
      [WEIRD, 'passed'],
      ['zbig.md', 'skipped'],
    ]);
    // Each case's message is the JSON report's reason (and error), to the letter.
    const bad = run.report.items.find((i) => i.path === 'bad.json');
    expect(junit.cases[0]?.message).toBe(`upload: ${bad?.reason}: ${bad?.error}`);
    expect(junit.cases[1]?.systemOut).toBe('upload: new file; 5 credits');
    expect(junit.cases[4]?.message).toBe(run.report.items.find((i) => i.path === 'zbig.md')?.reason);
  });

  it('sync --all --junit FILE lists the unchanged files too, as passed cases', async () => {
    const { ws } = await mixedWorkspace();

    const run = await ws.run('sync', '--all', '--junit', 'junit.xml');

    // 3: the budget left zbig.md for the next run.
    expect(run.code).toBe(3);
    const junit = parseJunit(readFileSync(join(ws.root, 'junit.xml'), 'utf8'));
    expect(junit.cases.find((c) => c.name === 'old.md')).toMatchObject({
      outcome: 'passed',
      systemOut: 'skip:unchanged: unchanged since last sync',
    });
    expect(junit.suites[0]?.['system-out']).toBeUndefined();
  });

  it('a report that cannot be written stops sync before anything is sent (exit 2, nothing charged)', async () => {
    const { ws, balance } = await mixedWorkspace();
    writeFileSync(join(ws.root, 'a-file'), '');
    const before = await balance();

    const run = await ws.run('sync', '--junit', 'a-file/junit.xml');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--junit: cannot write ${join(ws.root, 'a-file/junit.xml')}`);
    expect(await balance()).toBe(before);
  });

  it('the built CLI with GITHUB_STEP_SUMMARY set appends the --report-md Markdown to that file, after what earlier steps wrote', async () => {
    const { ws } = await mixedWorkspace();
    const summary = join(ws.root, 'step-summary.md');
    writeFileSync(summary, '## Build\n\nok\n');

    const child = await spawnKbsync(['sync', '-c', ws.configPath, '--report-md', 'report.md'], ws.root, { GITHUB_STEP_SUMMARY: summary })
      .exited;

    expect(child.code).toBe(3);
    const report = readFileSync(join(ws.root, 'report.md'), 'utf8');
    expect(readFileSync(summary, 'utf8')).toBe(`## Build\n\nok\n\n${report}`);
    expect(parseMarkdown(readFileSync(summary, 'utf8')).headings).toEqual(['Build', 'kbsync sync', 'Skipped (2)']);
  });
});

describe('the progress bar', () => {
  /** Runs the built CLI under a pseudo-terminal (util-linux `script`), returning what the terminal got. */
  async function onTerminal(ws: Workspace, args: string[]): Promise<string> {
    const quote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;
    const command = [process.execPath, KBSYNC_BIN, ...args, '-c', ws.configPath].map(quote).join(' ');
    const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
      cwd: ws.root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws.root },
    });
    return stdout;
  }

  it('is drawn on a terminal (hashing, uploading, waiting), and not in a pipe nor with --json', async () => {
    const workspaces = [0, 1, 2].map(() => {
      const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: suite.svc.dataset({ credits: 1000 }).apiKey });
      ws.write('a.md', '# A\n');
      ws.write('b.md', '# B\n');
      return ws;
    });
    const [tty, pipe, json] = workspaces as [Workspace, Workspace, Workspace];
    expect(existsSync('/usr/bin/script') || existsSync('/bin/script')).toBe(true);

    const bar = await onTerminal(tty, ['sync', '--wait']);
    const piped = await spawnKbsync(['sync', '--wait', '-c', pipe.configPath], pipe.root).exited;
    const jsonOnTerminal = await onTerminal(json, ['sync', '--wait', '--json']);

    expect(bar).toMatch(/\rhashing +\[#+\] 2\/2 /);
    expect(bar).toMatch(/\ruploading \[#+\] 2\/2 [ab]\.md/);
    expect(bar).toMatch(/\rwaiting +\[#+\] 2\/2 processed/);
    // Erased before the report: the report's first line starts clean.
    expect(bar).toMatch(/\r\x1b\[K\S+ +upload +5 +a\.md/);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/2 uploaded/);
    expect(piped.stderr + piped.stdout).not.toMatch(/hashing|uploading|waiting|\r|\x1b/);
    expect(jsonOnTerminal).not.toMatch(/hashing|uploading|waiting|\x1b/);
    expect(JSON.parse(jsonOnTerminal.replaceAll('\r\n', '\n'))).toMatchObject({ summary: { uploaded: 2 } });
  });
});
