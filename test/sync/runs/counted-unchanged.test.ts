import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { WALK_AHEAD_MIN_STATE_BYTES, type PreparedPlan } from '../../../src/sync/executor/prepare.js';
import { preparedPlanOf } from '../../helpers/prepare-plan.js';
import { jsonReportChunks } from '../../../src/sync/report/json-report.js';
import { formatPlan } from '../../../src/sync/report/format-plan.js';
import { createWorkspace, type JsonItem, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();

let ws: Workspace;
let wiki: string;

/**
 * Two folder sources synced once, then an afternoon's changes: an editor's atomic save, a file
 * touched with the same bytes, a folder made deep with a file in it, a deletion, an empty file.
 */
beforeEach(async () => {
  const ds = suite.svc.dataset({ credits: 100_000 });
  ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
  wiki = join(ws.root, 'wiki');
  mkdirSync(wiki);
  ws.configure({
    sources: [
      { name: 'docs', path: './docs' },
      { name: 'wiki', path: './wiki' },
    ],
  });
  for (let i = 0; i < 40; i++) ws.write(`area-${i % 4}/doc-${i}.md`, `# doc ${i}\n`);
  for (let i = 0; i < 5; i++) writeFileSync(join(wiki, `page-${i}.md`), `# page ${i}\n`);
  expect((await ws.run('sync', '--wait')).code).toBe(0);

  writeFileSync(join(ws.docs, 'area-0/.doc-0.md.swp'), '# doc 0, edited\n');
  renameSync(join(ws.docs, 'area-0/.doc-0.md.swp'), join(ws.docs, 'area-0/doc-0.md'));
  utimesSync(join(ws.docs, 'area-1/doc-1.md'), new Date(), new Date(Date.now() + 5000));
  ws.write('area-2/deep/er/still/new.md', '# new, deep\n');
  ws.write('area-3/empty.md', '');
  ws.remove('area-3/doc-3.md');
});

/** preparePlan on the workspace's state, counting unchanged files or planning them (padded to start the walk-ahead helper). */
const prepare = (countUnchanged: boolean, padBytes = 0): Promise<PreparedPlan> =>
  preparedPlanOf(ws.configPath, { countUnchanged, padBytes });

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('plan and sync count the unchanged files, and their reports still list them', () => {
  it('a counted plan holds only the changed files, and its --json and --all reports are the full plan reports, byte for byte', async () => {
    for (const pad of [0, WALK_AHEAD_MIN_STATE_BYTES]) {
      const full = await prepare(false, pad);
      const counted = await prepare(true, pad);
      expect(full.unlisted).toBeNull();
      expect(counted.unlisted?.count).toBe(42);
      expect(counted.unlisted?.sources).toEqual(['docs', 'wiki']);
      // Not listed: the unchanged files. Touched with the same bytes, doc-1 is listed: its new stat is recorded.
      expect(counted.plan.items.map((i) => [i.source, i.path, i.action])).toEqual([
        ['docs', 'area-0/doc-0.md', 'upload'],
        ['docs', 'area-1/doc-1.md', 'skip:unchanged'],
        ['docs', 'area-2/deep/er/still/new.md', 'upload'],
        ['docs', 'area-3/doc-3.md', 'deleted'],
        ['docs', 'area-3/empty.md', 'skip:empty'],
      ]);
      expect(counted.plan.totals).toEqual(full.plan.totals);
      expect([...jsonReportChunks(counted.plan, counted.unlisted)].join('')).toBe([...jsonReportChunks(full.plan)].join(''));
      expect(formatPlan(counted.plan, { showUnchanged: true, unlisted: counted.unlisted })).toBe(
        formatPlan(full.plan, { showUnchanged: true }),
      );
      expect(formatPlan(counted.plan, { unlisted: counted.unlisted })).toBe(formatPlan(full.plan));
    }
  });

  it('kbsync plan, plan --json, plan --all and sync --json as a person runs them', async () => {
    const text = await ws.run('plan');
    expect(text.stdout).toContain('(43 unchanged files not listed)');
    // Two sources: each path is named with its own, though only docs has changes.
    expect(text.stdout).toMatch(/^upload +\d+ +docs\/area-0\/doc-0\.md /m);
    expect(text.stdout).not.toContain('wiki/page-0.md');

    const all = await ws.run('plan', '--all');
    expect(all.stdout).toMatch(/^skip:unchanged +0 +wiki\/page-4\.md +unchanged since last sync$/m);
    expect(all.stdout.split('\n').filter((l) => l.startsWith('skip:unchanged')).length).toBe(43);

    const plan = await ws.runJson('plan');
    const keys = plan.report.items.map((i) => `${i.source}/${i.path}`);
    expect(keys).toEqual([...keys].sort());
    expect(keys).toHaveLength(47);
    const page: JsonItem | undefined = plan.report.items.find((i) => i.path === 'page-2.md');
    expect(page).toMatchObject({
      source: 'wiki',
      action: 'skip:unchanged',
      reason: 'unchanged since last sync',
      credits: 0,
      remoteName: 'wiki/page-2.md',
      size: Buffer.byteLength('# page 2\n'),
      sha256: sha('# page 2\n'),
    });
    expect(page?.remoteId).toEqual(expect.any(String));

    const sync = await ws.runJson('sync');
    expect(sync.code).toBe(0);
    expect(sync.report.items).toHaveLength(47);
    expect(sync.report.items.find((i) => i.path === 'area-2/doc-2.md')).toMatchObject({ action: 'skip:unchanged', outcome: 'done' });
    expect(sync.report.summary).toMatchObject({ uploaded: 2, unchanged: 43 });

    // The next plan: nothing to do, each file counted once.
    const after = await ws.runJson('plan');
    expect(after.report.summary).toMatchObject({ uploaded: 0, unchanged: 45 });
    expect(after.report.items.filter((i) => i.action === 'skip:unchanged')).toHaveLength(45);
  });
});
