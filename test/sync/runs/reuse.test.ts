import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { createGitOrigin, GIT_ENV } from '../../helpers/e2e-git.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace, itemOf, pathsWith, type Workspace } from '../../helpers/e2e-workspace.js';
import { git } from '../../helpers/git.js';
import { freshDatabase } from '../../helpers/postgres.js';

const suite = useE2eSuite();
const REAL_DOCX = join(import.meta.dirname, '../../fixtures/real/docx');
// kbsync runs in-process: its git must not see this machine's git config either.
beforeEach(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

async function syncCharged(ws: Workspace, ds: E2eDataset, ...args: string[]) {
  const before = await ds.balance();
  const run = await ws.runJson('sync', ...args);
  return { ...run, charged: before - (await ds.balance()) };
}

function folderWorkspace(state?: string): { ws: Workspace; ds: E2eDataset } {
  const ds = suite.svc.dataset({ credits: 1000 });
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.svc.url,
    apiKey: ds.apiKey,
    config: state === undefined ? {} : { state },
  });
  return { ws, ds };
}

const STATES = [
  { name: 'sqlite', state: async (): Promise<string | undefined> => undefined },
  { name: 'postgres', state: async (): Promise<string | undefined> => freshDatabase('reuse') },
];

describe.each(STATES)('an edit undone ($name state)', ({ state }) => {
  it('costs nothing: plan says reuse with the copy id, and the path tracks that copy again', async () => {
    const url = await state();
    const { ws, ds } = folderWorkspace(url);
    ws.write('a.md', '# A\nalpha\n');
    const first = await syncCharged(ws, ds, '--wait');
    const firstId = String(itemOf(first.report, 'a.md').remoteId);
    expect(first.charged).toBe(5);

    ws.write('a.md', '# A\nalpha, edited\n');
    const edited = await syncCharged(ws, ds, '--wait');
    expect(edited.charged).toBe(5);
    const editedId = String(itemOf(edited.report, 'a.md').remoteId);

    ws.write('a.md', '# A\nalpha\n');
    const plan = await ws.run('plan');
    expect(plan.stdout).toMatch(new RegExp(`reuse +0 +a\\.md +the dataset holds this content \\(file ${firstId}, uploaded as a\\.md\\)`));
    const planned = await ws.runJson('plan');
    expect(itemOf(planned.report, 'a.md')).toMatchObject({ action: 'reuse', credits: 0, remoteId: firstId });
    expect(planned.report.summary).toMatchObject({ uploaded: 0, renamed: 1, creditsPlanned: 0 });

    const explain = await ws.run('explain', 'a.md');
    expect(explain.stdout).toMatch(
      new RegExp(`decision: +reuse: the dataset holds this content \\(file ${firstId}, uploaded as a\\.md\\)`),
    );
    expect(explain.stdout).toMatch(new RegExp(`reuses: +a\\.md, id ${firstId} \\(processed\\): a copy of this content the dataset holds`));
    expect(explain.stdout).toMatch(new RegExp(`stale copy: +a\\.md, id ${editedId}: stays in the dataset`));

    const undone = await syncCharged(ws, ds);
    expect(undone.code).toBe(0);
    expect(itemOf(undone.report, 'a.md')).toMatchObject({
      action: 'reuse',
      credits: 0,
      remoteId: firstId,
      staleRemoteId: editedId,
      outcome: 'done',
    });
    expect(itemOf(undone.report, 'a.md').reason).toContain(`the copy it replaces (id ${editedId}) stays, stale`);
    expect(undone.charged).toBe(0);
    expect((await ds.files()).filter((f) => f.name === 'a.md')).toHaveLength(2);
    const view = openState(url ?? ws.statePath, { lock: false });
    try {
      expect(view.getTracked('docs', 'a.md')).toMatchObject({ remoteId: firstId, remoteStatus: 'processed', lastAction: 'reuse' });
    } finally {
      view.close();
    }

    // Unchanged from now on; and the edit back is free too (its copy is the one held now).
    const again = await syncCharged(ws, ds);
    expect(itemOf(again.report, 'a.md').action).toBe('skip:unchanged');
    ws.write('a.md', '# A\nalpha, edited\n');
    const redo = await syncCharged(ws, ds);
    expect(itemOf(redo.report, 'a.md')).toMatchObject({ action: 'reuse', remoteId: editedId });
    expect(redo.charged).toBe(0);

    // The audit still reports the copy the path left as stale.
    const audit = await ws.run('audit');
    expect(audit.stdout).toMatch(new RegExp(`^stale-copy +a\\.md +#${firstId} +an older copy of a\\.md`, 'm'));
    expect(audit.stdout).toContain('1 finding (1 stale-copy)');
  });
});

describe('content the dataset already holds', () => {
  it('a copy the service failed to process is never reused: that content is uploaded again', async () => {
    const { ws, ds } = folderWorkspace();
    // The service cannot parse a truncated DOCX (parse_failed); the copy is kept, failed.
    const truncated = readFileSync(join(REAL_DOCX, 'corrupt/tables.truncated.docx'));
    ws.write('r.docx', truncated);
    expect((await syncCharged(ws, ds, '--wait', '--wait-timeout', '30')).charged).toBe(5);
    const failed = (await ds.files()).filter((f) => f.status === 'failed');
    expect(failed.map((f) => f.name)).toEqual(['r.docx']);
    const badId = String(failed[0]?.id);

    ws.write('r.docx', readFileSync(join(REAL_DOCX, 'tables.docx')));
    expect((await syncCharged(ws, ds, '--wait', '--wait-timeout', '30')).charged).toBe(5);
    ws.write('r.docx', truncated);

    const plan = await ws.runJson('plan');
    expect(itemOf(plan.report, 'r.docx')).toMatchObject({ action: 'upload', credits: 5 });
    const state = openState(ws.statePath);
    try {
      expect(state.heldCopies().find((c) => c.remoteId === badId)?.status).toBe('failed');
    } finally {
      state.close();
    }
  });

  it('a 0-byte file is skipped (skip:empty, 0 credits, nothing sent); a file emptied after its upload keeps its row and copy', async () => {
    const { ws, ds } = folderWorkspace();
    ws.write('empty.md', '');
    ws.write('b.md', '# B\nbravo\n');
    const plan = await ws.run('plan');
    expect(plan.stdout).toMatch(/skip:empty +0 +empty\.md +empty file \(0 bytes\): nothing to upload/);
    const first = await syncCharged(ws, ds);
    expect(itemOf(first.report, 'empty.md')).toMatchObject({ action: 'skip:empty', credits: 0 });
    expect(first.report.summary).toMatchObject({ uploaded: 1, skipped: 1, creditsSpent: 5 });
    expect(first.charged).toBe(5);
    expect((await ds.files()).map((f) => f.name)).toEqual(['b.md']);

    const bId = String(itemOf(first.report, 'b.md').remoteId);
    ws.write('b.md', '');
    const emptied = await syncCharged(ws, ds);
    expect(itemOf(emptied.report, 'b.md')).toMatchObject({ action: 'skip:empty', credits: 0, remoteId: bId });
    expect(itemOf(emptied.report, 'b.md').reason).toContain(`the copy of its earlier content (id ${bId}) remains in the dataset`);
    expect(emptied.charged).toBe(0);

    // Its content back: unchanged, as the row still tracks that copy.
    ws.write('b.md', '# B\nbravo\n');
    const back = await syncCharged(ws, ds);
    expect(itemOf(back.report, 'b.md')).toMatchObject({ action: 'skip:unchanged', remoteId: bId });
    expect(back.charged).toBe(0);
  });
});

describe('a Git source moved back and forth', () => {
  it('a reset to an older commit and back, and a ref changed and back, cost nothing after the first time', async () => {
    const root = suite.temp.make();
    const v1 = { 'a.md': '# A\none\n', 'b.md': '# B\none\n', 'c.md': '# C\none\n' };
    const origin = createGitOrigin(root, v1);
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main' } }] },
    });
    const c1 = git(origin.work, ['rev-parse', 'HEAD']).trim();
    expect((await syncCharged(ws, ds, '--wait')).charged).toBe(15);
    const c2 = origin.commit({ 'a.md': '# A\ntwo\n', 'b.md': '# B\ntwo\n' }, 'two');
    // Without --wait: the next sync fetches the listing (its copies' statuses), which then decides too.
    expect((await syncCharged(ws, ds)).charged).toBe(10);

    git(origin.work, ['push', '-q', '-f', 'origin', `${c1}:main`]);
    const reset = await syncCharged(ws, ds);
    expect(pathsWith(reset.report, 'reuse')).toEqual(['a.md', 'b.md']);
    expect(reset.charged).toBe(0);

    git(origin.work, ['push', '-q', '-f', 'origin', `${c2}:main`]);
    const forward = await syncCharged(ws, ds);
    expect(pathsWith(forward.report, 'reuse')).toEqual(['a.md', 'b.md']);
    expect(forward.charged).toBe(0);

    // Another branch: its new content is bought once; back to main and to it again, free.
    git(origin.work, ['checkout', '-q', '-b', 'other', c2]);
    writeFileSync(join(origin.work, 'c.md'), '# C\nother\n');
    git(origin.work, ['commit', '-q', '-am', 'other']);
    git(origin.work, ['push', '-q', 'origin', 'other']);
    ws.configure({ sources: [{ name: 'repo', git: { url: origin.bare, ref: 'other' } }] });
    expect((await syncCharged(ws, ds, '--wait')).charged).toBe(5);
    ws.configure({ sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main' } }] });
    const toMain = await syncCharged(ws, ds);
    expect(pathsWith(toMain.report, 'reuse')).toEqual(['c.md']);
    expect(toMain.charged).toBe(0);
    ws.configure({ sources: [{ name: 'repo', git: { url: origin.bare, ref: 'other' } }] });
    const toOther = await syncCharged(ws, ds);
    expect(pathsWith(toOther.report, 'reuse')).toEqual(['c.md']);
    expect(toOther.charged).toBe(0);
    expect(await ds.files()).toHaveLength(6);
  });
});
