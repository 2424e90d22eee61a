import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { junitSchemaErrors, parseJunit, parseMarkdown } from '../../helpers/ci-reports.js';
import { createTempDirs, createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';

/*
 * `kbsync sync --report-md F --junit F` when the sync fails before its run: each report still says
 * that it failed and why, and the exit code is the one the same failure has without reports.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());

const REPORTS = ['--report-md', 'out/report.md', '--junit', 'out/junit.xml'];

/** A workspace whose sync fails as `breakIt` makes it fail (no service runs: nothing may be reached). */
function broken(breakIt: (ws: Workspace) => void): Workspace {
  // Port 9 (discard) on loopback: nothing listens there, the connection is refused at once.
  const ws = createWorkspace(temp.make(), { baseUrl: 'http://127.0.0.1:9', apiKey: 'kb_test_not_a_real_key' });
  ws.write('a.md', '# A\n');
  breakIt(ws);
  return ws;
}

/** Runs the failing sync without reports, then with both: same exit code, and each report read back. */
async function failedReports(
  ws: Workspace,
): Promise<{ code: number; stderr: string; md: ReturnType<typeof parseMarkdown>; junit: ReturnType<typeof parseJunit>; raw: string }> {
  const bare = await ws.run('sync');
  expect(bare.code).not.toBe(0);
  const run = await ws.run('sync', ...REPORTS);
  expect(run.code).toBe(bare.code);
  const mdPath = join(ws.root, 'out/report.md');
  const xmlPath = join(ws.root, 'out/junit.xml');
  expect(existsSync(mdPath) && existsSync(xmlPath)).toBe(true);
  const mdText = readFileSync(mdPath, 'utf8');
  const xml = readFileSync(xmlPath, 'utf8');
  expect(await junitSchemaErrors(xml)).toEqual([]);
  return { code: run.code, stderr: run.stderr, md: parseMarkdown(mdText), junit: parseJunit(xml), raw: mdText + xml };
}

/** Both reports say the sync failed, with `why` in the failure's message. */
function expectFailure(r: Awaited<ReturnType<typeof failedReports>>, why: RegExp): void {
  expect(r.md.headings).toEqual(['kbsync sync', 'Failures (1)']);
  expect(r.md.paragraphs[0]).toBe('<strong>1 failed.</strong>');
  expect(r.md.tables.at(-1)?.header).toEqual(['name', 'status', 'message']);
  const row = r.md.tables.at(-1)?.rows[0] ?? [];
  expect(row.slice(0, 2)).toEqual(['sync', 'error']);
  expect(row[2]).toMatch(why);
  expect(r.junit.root).toMatchObject({ name: 'kbsync sync', tests: '1', failures: '0', errors: '1' });
  expect(r.junit.cases).toHaveLength(1);
  expect(r.junit.cases[0]).toMatchObject({ name: 'sync', outcome: 'error' });
  expect(r.junit.cases[0]?.message).toMatch(why);
}

describe('kbsync sync --report-md/--junit when the sync fails before its run', () => {
  it('a bad config: the reports name the problem (file, line, key)', async () => {
    const ws = broken((w) => writeFileSync(w.configPath, 'version: 1\nsources:\n  - name: docs\n    path: ./docs\n    bogusKey: 3\n'));
    const r = await failedReports(ws);
    expect(r.code).toBe(2);
    expectFailure(r, /^config_invalid: .*kbsync\.yaml:5.*bogusKey/);
  });

  it('the state unavailable: the reports say so, with no password', async () => {
    const ws = broken((w) => w.configure({ state: 'postgres://kbsync:sekret-pass@127.0.0.1:9/kb' }));
    const r = await failedReports(ws);
    expectFailure(r, /^state_unavailable: cannot open the PostgreSQL state/);
    expect(r.raw).not.toContain('sekret-pass');
    expect(r.stderr).not.toContain('sekret-pass');
  });

  it('the target unreachable: the reports carry the error that ended the sync', async () => {
    const ws = broken(() => {});
    const r = await failedReports(ws);
    expectFailure(r, /127\.0\.0\.1:9/);
    expect(r.raw).not.toContain('kb_test_not_a_real_key');
  });
});
