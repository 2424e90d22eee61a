import { createHash } from 'node:crypto';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createGitOrigin, GIT_ENV } from '../../helpers/e2e-git.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, pathsWith, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();
const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
// kbsync runs in-process: its git must not see this machine's git config either.
beforeEach(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

async function syncCharged(ws: Workspace, ds: E2eDataset) {
  const before = await ds.balance();
  const run = await ws.runJson('sync');
  return { ...run, charged: before - (await ds.balance()) };
}

describe('a Git source (local bare repository, pushed to from a working clone)', () => {
  it('follows commits, renames and a force-pushed rewrite, paying only for changed content', async () => {
    const root = suite.temp.make();
    const origin = createGitOrigin(root, {
      'README.md': '# Project\n',
      'docs/a.md': '# A\nversion 1\n',
      'docs/b.md': '# B\nbravo\n',
      'src/main.ts': 'export {};\n',
    });
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main' } }] },
    });

    const first = await syncCharged(ws, ds);
    expect(first.code).toBe(0);
    expect(pathsWith(first.report, 'upload')).toEqual(['README.md', 'docs/a.md', 'docs/b.md']);
    expect(itemOf(first.report, 'src/main.ts').action).toBe('skip:unsupported');
    expect(first.charged).toBe(15);

    origin.commit({ 'docs/a.md': '# A\nversion 2\n' }, 'edit a');
    const changed = await syncCharged(ws, ds);
    expect(pathsWith(changed.report, 'upload')).toEqual(['docs/a.md']);
    expect(changed.report.summary).toMatchObject({ uploaded: 1, unchanged: 2, creditsSpent: 5 });
    expect(changed.charged).toBe(5);

    origin.move('docs/b.md', 'docs/guide/b.md', 'move b');
    const renamed = await syncCharged(ws, ds);
    expect(itemOf(renamed.report, 'docs/guide/b.md')).toMatchObject({ action: 'rename', credits: 0 });
    expect(renamed.report.items.some((i) => i.path === 'docs/b.md')).toBe(false);
    expect(renamed.report.summary).toMatchObject({ uploaded: 0, renamed: 1, creditsSpent: 0 });
    expect(renamed.charged).toBe(0);

    // The synced tip leaves the history: its replacement also changes README.md.
    origin.amendAndForcePush({ 'README.md': '# Project\nrewritten\n' });
    const rewritten = await syncCharged(ws, ds);
    expect(rewritten.code).toBe(0);
    expect(pathsWith(rewritten.report, 'upload')).toEqual(['README.md']);
    expect(pathsWith(rewritten.report, 'skip:unchanged')).toEqual(['docs/a.md', 'docs/guide/b.md']);
    expect(rewritten.charged).toBe(5);

    const again = await syncCharged(ws, ds);
    expect(again.report.summary).toMatchObject({ uploaded: 0, renamed: 0, unchanged: 3, creditsSpent: 0 });
    expect(again.charged).toBe(0);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['README.md', 'README.md', 'docs/a.md', 'docs/a.md', 'docs/b.md']);
  });

  it('with subdir: syncs only that folder, with paths relative to it', async () => {
    const origin = createGitOrigin(suite.temp.make(), {
      'README.md': '# Project\n',
      'docs/a.md': '# A\n',
      'docs/sub/b.txt': 'bravo\n',
      'other/c.md': '# C\n',
    });
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main', subdir: 'docs' } }] },
    });

    const first = await syncCharged(ws, ds);
    origin.commit({ 'other/c.md': '# C\nchanged outside the subdir\n', 'README.md': '# Project\nchanged\n' }, 'outside');
    const outside = await syncCharged(ws, ds);
    origin.commit({ 'docs/sub/b.txt': 'bravo, changed\n' }, 'inside');
    const inside = await syncCharged(ws, ds);

    expect(pathsWith(first.report, 'upload')).toEqual(['a.md', 'sub/b.txt']);
    expect(first.report.items.map((i) => i.path).sort()).toEqual(['a.md', 'sub/b.txt']);
    expect(first.charged).toBe(10);
    expect(outside.report.summary).toMatchObject({ uploaded: 0, unchanged: 2, creditsSpent: 0 });
    expect(outside.charged).toBe(0);
    expect(pathsWith(inside.report, 'upload')).toEqual(['sub/b.txt']);
    expect(inside.charged).toBe(5);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'sub/b.txt', 'sub/b.txt']);
  });

  it('a subdir switched in the config: the same relative path is another file, hashed and uploaded, not taken as unchanged', async () => {
    const origin = createGitOrigin(suite.temp.make(), { 'docs/a.md': '# A, the docs version\n', 'guide/a.md': '# A, the guide version\n' });
    const ds = suite.svc.dataset({ credits: 1000 });
    const source = (subdir: string) => ({ sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main', subdir } }] });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: source('docs') });

    const docs = await syncCharged(ws, ds);
    ws.configure(source('guide'));
    const guide = await syncCharged(ws, ds);
    const again = await syncCharged(ws, ds);

    expect(docs.charged).toBe(5);
    expect(itemOf(guide.report, 'a.md')).toMatchObject({ action: 'upload', outcome: 'done', credits: 5 });
    expect(guide.charged).toBe(5);
    expect(again.report.summary).toMatchObject({ uploaded: 0, unchanged: 1, creditsSpent: 0 });
    expect((await ds.files()).map((f) => f.sha256).sort()).toEqual(
      [sha256Hex('# A, the docs version\n'), sha256Hex('# A, the guide version\n')].sort(),
    );
  });

  it('a followed link whose target changes is uploaded again, though git reports only the target', async () => {
    const origin = createGitOrigin(suite.temp.make(), { 'notes.xyz': 'version 1\n', 'y.md': '# Y 1\n' });
    symlinkSync('notes.xyz', join(origin.work, 'notes.md'));
    symlinkSync('y.md', join(origin.work, 'x.md')); // a target whose path is as long as the link's
    origin.commit({}, 'link');
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main' }, followSymlinks: true }] },
    });

    const first = await syncCharged(ws, ds);
    origin.commit({ 'notes.xyz': 'version 2, longer\n', 'y.md': '# Y 2, longer\n' }, 'edit the targets');
    const edited = await syncCharged(ws, ds);

    expect(itemOf(first.report, 'notes.md')).toMatchObject({ action: 'upload', credits: 5 });
    expect(itemOf(edited.report, 'notes.md')).toMatchObject({ action: 'upload', outcome: 'done', credits: 5 });
    // x.md and y.md hold the same new content: one upload, the other a free duplicate.
    expect([itemOf(edited.report, 'x.md').action, itemOf(edited.report, 'y.md').action].sort()).toEqual([
      'skip:duplicate-content',
      'upload',
    ]);
    expect(edited.charged).toBe(10);
  });

  it('content back to an earlier version: the copy the dataset holds is reused, and tracked from then on', async () => {
    const origin = createGitOrigin(suite.temp.make(), { 'a.md': '# A\nversion 1\n' });
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { sources: [{ name: 'repo', git: { url: origin.bare, ref: 'main' } }] },
    });

    await syncCharged(ws, ds);
    origin.commit({ 'a.md': '# A\nversion 2\n' }, 'v2');
    await syncCharged(ws, ds);
    const [v1, v2] = (await ds.files()).map((f) => String(f.id));
    origin.commit({ 'a.md': '# A\nversion 1\n' }, 'back to v1');
    const back = await syncCharged(ws, ds);
    const after = await syncCharged(ws, ds);

    expect(v1).not.toBe(v2);
    expect(itemOf(back.report, 'a.md')).toMatchObject({ action: 'reuse', remoteId: v1, credits: 0 });
    expect(back.charged).toBe(0);
    expect(itemOf(after.report, 'a.md')).toMatchObject({ action: 'skip:unchanged', remoteId: v1 });
    expect(after.charged).toBe(0);
  });
});
