import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { junitSchemaErrors, parseJunit, parseMarkdown } from '../../helpers/ci-reports.js';
import { createTempDirs, createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';

/*
 * `kbsync sync|check|audit --report-md F --junit F` when the command fails before its report: each
 * report still says that it failed and why, and the exit code is the one the same failure has without
 * reports. All three share src/cli/ci-report/from-failure.ts.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());

const REPORTS = ['--report-md', 'out/report.md', '--junit', 'out/junit.xml'];

/** Each command that writes CI reports, with the arguments it needs besides them. */
const COMMANDS = [
  { name: 'sync', args: ['sync'] },
  { name: 'check', args: ['check', '--questions', 'checks.yaml'] },
  { name: 'audit', args: ['audit'] },
] as const;

/** A workspace whose commands fail as `breakIt` makes them fail (no service runs: nothing may be reached). */
function broken(breakIt: (ws: Workspace) => void): Workspace {
  // Port 9 (discard) on loopback: nothing listens there, the connection is refused at once.
  const ws = createWorkspace(temp.make(), { baseUrl: 'http://127.0.0.1:9', apiKey: 'kb_test_not_a_real_key' });
  ws.write('a.md', '# A\n');
  writeFileSync(join(ws.root, 'checks.yaml'), '- question: what is A\n  expect: [a.md]\n');
  breakIt(ws);
  return ws;
}

type Failed = { code: number; stderr: string; md: ReturnType<typeof parseMarkdown>; junit: ReturnType<typeof parseJunit>; raw: string };

/** Runs the failing command without reports, then with both: same exit code, and each report read back. */
async function failedReports(ws: Workspace, args: readonly string[]): Promise<Failed> {
  const bare = await ws.run(...args);
  expect(bare.code).not.toBe(0);
  const run = await ws.run(...args, ...REPORTS);
  expect(run.code).toBe(bare.code);
  const mdPath = join(ws.root, 'out/report.md');
  const xmlPath = join(ws.root, 'out/junit.xml');
  expect(existsSync(mdPath) && existsSync(xmlPath)).toBe(true);
  const mdText = readFileSync(mdPath, 'utf8');
  const xml = readFileSync(xmlPath, 'utf8');
  expect(await junitSchemaErrors(xml)).toEqual([]);
  return { code: run.code, stderr: run.stderr, md: parseMarkdown(mdText), junit: parseJunit(xml), raw: mdText + xml };
}

/** Both reports say `command` failed, with `why` in the failure's message. */
function expectFailure(r: Failed, command: string, why: RegExp): void {
  expect(r.md.headings).toEqual([`kbsync ${command}`, 'Failures (1)']);
  expect(r.md.paragraphs[0]).toBe('<strong>1 failed.</strong>');
  expect(r.md.tables.at(-1)?.header).toEqual(['name', 'status', 'message']);
  const row = r.md.tables.at(-1)?.rows[0] ?? [];
  expect(row.slice(0, 2)).toEqual([command, 'error']);
  expect(row[2]).toMatch(why);
  expect(r.junit.root).toMatchObject({ name: `kbsync ${command}`, tests: '1', failures: '0', errors: '1' });
  expect(r.junit.cases).toHaveLength(1);
  expect(r.junit.cases[0]).toMatchObject({ name: command, outcome: 'error' });
  expect(r.junit.cases[0]?.message).toMatch(why);
}

describe.each(COMMANDS)('kbsync $name --report-md/--junit when it fails before its report', ({ name, args }) => {
  it('a bad config: the reports name the problem (file, line, key)', async () => {
    const ws = broken((w) => writeFileSync(w.configPath, 'version: 1\nsources:\n  - name: docs\n    path: ./docs\n    bogusKey: 3\n'));
    const r = await failedReports(ws, args);
    expect(r.code).toBe(2);
    expectFailure(r, name, /^config_invalid: .*kbsync\.yaml:5.*bogusKey/);
  });

  it('the state unavailable: the reports say so, with no password', async () => {
    const ws = broken((w) => w.configure({ state: 'postgres://kbsync:sekret-pass@127.0.0.1:9/kb' }));
    const r = await failedReports(ws, args);
    expectFailure(r, name, /^state_unavailable: cannot open the PostgreSQL state/);
    expect(r.raw).not.toContain('sekret-pass');
    expect(r.stderr).not.toContain('sekret-pass');
  });

  it('the target unreachable: the reports carry the error that ended the command, with no API key', async () => {
    const ws = broken(() => {});
    const r = await failedReports(ws, args);
    expectFailure(r, name, /127\.0\.0\.1:9/);
    expect(r.raw).not.toContain('kb_test_not_a_real_key');
    expect(r.stderr).not.toContain('kb_test_not_a_real_key');
  });
});

describe('kbsync check --report-md/--junit with a bad checks file', () => {
  it('the reports name each problem with its line, as check prints them; exit 2, nothing reached', async () => {
    const ws = broken((w) => writeFileSync(join(w.root, 'checks.yaml'), '- question: what is A\n  expect: []\n'));
    const r = await failedReports(ws, COMMANDS[1].args);
    expect(r.code).toBe(2);
    expectFailure(r, 'check', /^usage: .*checks\.yaml:2: \[0\]\.expect: a list of at least one source path/);
    // Refused before the state is opened: no state file was made.
    expect(existsSync(ws.statePath)).toBe(false);
  });
});
