import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDirs, createWorkspace, itemOf, type Workspace } from '../../helpers/e2e-workspace.js';

const REAL = join(import.meta.dirname, '../../fixtures/real/docx');
const temp = createTempDirs();
afterAll(() => temp.cleanup());

/** The embedded dataset's balance, read from the service's own database. */
function balanceOf(ws: Workspace): number {
  const db = new Database(join(ws.root, '.kbsync/service/service.db'), { readonly: true });
  try {
    return db.prepare('SELECT credits FROM datasets WHERE id = 1').pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('a file the service cannot parse (embedded target)', () => {
  it("sync --wait pays for the upload only: no reprocess, the service's reason and what to do; later runs plan and spend nothing until the file changes", async () => {
    const ws = createWorkspace(temp.make(), { baseUrl: 'http://unused.invalid', apiKey: 'unused' });
    ws.configure({
      target: { kind: 'embedded', plan: 'basic', dataDir: '.kbsync/service', startCredits: 1000 },
      upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 2 },
    });
    copyFileSync(join(REAL, 'corrupt/tables.truncated.docx'), join(ws.docs, 'report.docx'));
    ws.write('good.md', '# Good\nThis one parses.\n');

    const run = await ws.runJson('sync', '--wait', '--wait-timeout', '30');

    expect(run.code, run.stderr).toBe(1);
    const bad = itemOf(run.report, 'report.docx');
    expect(bad).toMatchObject({ action: 'upload', outcome: 'failed', credits: 5, creditsPlanned: 5 });
    expect(String(bad.error)).toMatch(/^remote processing failed: parse_failed: not a valid DOCX file: the ZIP archive is truncated/);
    expect(String(bad.error)).toMatch(
      /not reprocessed: the service says the same file would fail again \(fix the file: it is uploaded again when its content changes\)$/,
    );
    expect(run.report.summary).toMatchObject({ uploaded: 1, failed: 1, creditsPlanned: 10, creditsSpent: 10 });
    expect(1000 - balanceOf(ws)).toBe(10);

    const plan = await ws.runJson('plan');
    expect(itemOf(plan.report, 'report.docx')).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
    expect(itemOf(plan.report, 'report.docx').reason).toMatch(
      /^remote processing failed: parse_failed: not a valid DOCX file.*not reprocessed/,
    );
    expect(plan.report.summary.creditsPlanned).toBe(0);

    const again = await ws.runJson('sync', '--wait', '--wait-timeout', '30');
    expect(itemOf(again.report, 'report.docx')).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
    expect(again.report.summary).toMatchObject({ creditsPlanned: 0, creditsSpent: 0 });
    expect(1000 - balanceOf(ws)).toBe(10);

    // The state lost: rebuilt from the listing, which gives the service's reason too.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${ws.statePath}${suffix}`, { force: true });
    const rebuilt = await ws.runJson('sync', '--wait', '--wait-timeout', '30');
    expect(rebuilt.stderr).toMatch(/state rebuilt from the remote listing/);
    expect(itemOf(rebuilt.report, 'report.docx')).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
    expect(itemOf(rebuilt.report, 'report.docx').reason).toMatch(/^remote processing failed: parse_failed: .*not reprocessed/);
    expect(rebuilt.report.summary.creditsSpent).toBe(0);
    expect(1000 - balanceOf(ws)).toBe(10);

    // Fixed: new content is uploaded (and processed) like any change.
    ws.write('report.docx', readFileSync(join(REAL, 'footnotes.docx')));
    const fixed = await ws.runJson('sync', '--wait', '--wait-timeout', '30');
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(itemOf(fixed.report, 'report.docx')).toMatchObject({ action: 'upload', outcome: 'done', credits: 5 });
    expect(1000 - balanceOf(ws)).toBe(15);
  });

  it('moved, renamed or copied elsewhere, the same bytes are never bought again: skip:remote-failed at the new path, 0 credits', async () => {
    const ws = createWorkspace(temp.make(), { baseUrl: 'http://unused.invalid', apiKey: 'unused' });
    ws.configure({
      target: { kind: 'embedded', plan: 'basic', dataDir: '.kbsync/service', startCredits: 1000 },
      upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 2 },
    });
    copyFileSync(join(REAL, 'corrupt/tables.truncated.docx'), join(ws.docs, 'report.docx'));
    const first = await ws.runJson('sync', '--wait', '--wait-timeout', '30');
    expect(itemOf(first.report, 'report.docx')).toMatchObject({ action: 'upload', outcome: 'failed', credits: 5 });
    expect(1000 - balanceOf(ws)).toBe(5);

    // Moved into another folder under another name, and a copy beside it.
    ws.move('report.docx', 'archive/report-2024.docx');
    copyFileSync(join(ws.docs, 'archive/report-2024.docx'), join(ws.docs, 'copy.docx'));
    const moved = await ws.runJson('sync', '--wait', '--wait-timeout', '30');

    for (const path of ['archive/report-2024.docx', 'copy.docx']) {
      expect(itemOf(moved.report, path), path).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
      expect(itemOf(moved.report, path).reason).toMatch(
        /^the same content failed before as report\.docx: parse_failed: not a valid DOCX file.*not uploaded again/,
      );
    }
    expect(moved.report.summary).toMatchObject({ uploaded: 0, creditsPlanned: 0, creditsSpent: 0 });
    expect(1000 - balanceOf(ws)).toBe(5);

    // Later runs: each path is tracked against the failed copy, with the service's reason.
    ws.move('archive/report-2024.docx', 'final.docx');
    const later = await ws.runJson('sync', '--wait', '--wait-timeout', '30');
    expect(itemOf(later.report, 'copy.docx')).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
    expect(itemOf(later.report, 'copy.docx').reason).toMatch(/^remote processing failed: parse_failed: .*not reprocessed/);
    expect(itemOf(later.report, 'final.docx')).toMatchObject({ action: 'skip:remote-failed', credits: 0 });
    expect(later.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });
    expect(1000 - balanceOf(ws)).toBe(5);
  });

  it('a JSON file nested 10,000 deep is charged once: parse_failed, not reprocessed by sync --wait', async () => {
    const ws = createWorkspace(temp.make(), { baseUrl: 'http://unused.invalid', apiKey: 'unused' });
    ws.configure({
      target: { kind: 'embedded', plan: 'basic', dataDir: '.kbsync/service', startCredits: 1000 },
      upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 2 },
    });
    ws.write('deep.json', `${'['.repeat(10_000)}${']'.repeat(10_000)}`);

    const run = await ws.runJson('sync', '--wait', '--wait-timeout', '30');

    expect(run.code, run.stderr).toBe(1);
    const deep = itemOf(run.report, 'deep.json');
    expect(deep).toMatchObject({ action: 'upload', outcome: 'failed', credits: 5 });
    expect(String(deep.error)).toMatch(
      /^remote processing failed: parse_failed: line 1, column 513: JSON arrays and objects nested more than 512 deep.*not reprocessed/,
    );
    expect(run.report.summary).toMatchObject({ failed: 1, creditsSpent: 5 });
    expect(1000 - balanceOf(ws)).toBe(5);
  });
});
