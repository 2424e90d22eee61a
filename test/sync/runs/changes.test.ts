import { statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';
import { openState } from '../../../src/sync/state/index.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, pathsWith, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();

let ds: E2eDataset;
let ws: Workspace;
/** A workspace already synced once with three files. */
beforeEach(async () => {
  ds = suite.svc.dataset({ credits: 1000 });
  ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { limits: { maxFileBytes: 4096 } } });
  ws.write('a.md', '# A\nalpha\n');
  ws.write('notes/b.txt', 'bravo\n');
  ws.write('c.csv', 'x,y\n1,2\n');
  const first = await ws.runJson('sync');
  expect(first.report.summary).toMatchObject({ uploaded: 3, creditsSpent: 15 });
});

/** Syncs and returns the report with the credits the service charged meanwhile. */
async function syncCharged() {
  const before = await ds.balance();
  const run = await ws.runJson('sync');
  return { ...run, charged: before - (await ds.balance()) };
}

describe('changes after the first sync', () => {
  it('a modified file is uploaded once; nothing else is', async () => {
    ws.write('notes/b.txt', 'bravo, revised\n');

    const run = await syncCharged();

    expect(run.code).toBe(0);
    expect(pathsWith(run.report, 'upload')).toEqual(['notes/b.txt']);
    expect(itemOf(run.report, 'notes/b.txt').reason).toMatch(/content changed.*previous remote copy \(id \d+\) stays, stale/);
    expect(run.report.summary).toMatchObject({ uploaded: 1, unchanged: 2, creditsSpent: 5 });
    expect(run.charged).toBe(5);
    expect((await ds.files()).filter((f) => f.name === 'notes/b.txt')).toHaveLength(2);
  });

  it('a file touched with the same content stays unchanged, and the state takes its new stat (the next pass need not hash it)', async () => {
    const abs = join(ws.docs, 'a.md');
    const later = new Date(Date.now() + 60_000);
    utimesSync(abs, later, later);
    const touched = mtimeNsOf(statSync(abs));

    const run = await syncCharged();

    expect(itemOf(run.report, 'a.md')).toMatchObject({ action: 'skip:unchanged', credits: 0 });
    expect(run.charged).toBe(0);
    const state = openState(ws.statePath);
    try {
      expect(state.getTracked('docs', 'a.md')?.mtimeNs).toBe(touched);
    } finally {
      state.close();
    }
  });

  it('a free duplicate and a touched file in one run: both recorded from the state as it was before the run', async () => {
    // The duplicate's row is written first (b... sorts before c.csv); c.csv's record then reads its old row.
    ws.write('b-copy.md', '# A\nalpha\n');
    const abs = join(ws.docs, 'c.csv');
    const later = new Date(Date.now() + 60_000);
    utimesSync(abs, later, later);

    const run = await syncCharged();

    expect(run.code).toBe(0);
    expect(itemOf(run.report, 'b-copy.md').action).toBe('skip:duplicate-content');
    expect(itemOf(run.report, 'c.csv').action).toBe('skip:unchanged');
    expect(run.charged).toBe(0);
    const state = openState(ws.statePath);
    try {
      expect(state.getTracked('docs', 'b-copy.md')?.lastAction).toBe('skip:duplicate-content');
      expect(state.getTracked('docs', 'c.csv')?.mtimeNs).toBe(mtimeNsOf(statSync(abs)));
    } finally {
      state.close();
    }
  });

  it('a renamed file costs nothing and is reported as a rename', async () => {
    ws.move('notes/b.txt', 'archive/b-old.txt');

    const run = await syncCharged();
    const again = await syncCharged();

    expect(run.code).toBe(0);
    const item = itemOf(run.report, 'archive/b-old.txt');
    expect(item).toMatchObject({ action: 'rename', credits: 0 });
    expect(item.reason).toMatch(/notes\/b\.txt/);
    expect(run.report.items.some((i) => i.path === 'notes/b.txt')).toBe(false);
    expect(run.report.summary).toMatchObject({ uploaded: 0, renamed: 1, creditsSpent: 0 });
    expect(run.charged).toBe(0);
    expect(itemOf(again.report, 'archive/b-old.txt').action).toBe('skip:unchanged');
    expect(again.charged).toBe(0);
    expect((await ds.files()).length).toBe(3);
  });

  it('identical content at a new path is a free duplicate', async () => {
    ws.write('copies/a-copy.md', '# A\nalpha\n');

    const run = await syncCharged();

    expect(itemOf(run.report, 'copies/a-copy.md')).toMatchObject({ action: 'skip:duplicate-content', credits: 0 });
    expect(itemOf(run.report, 'copies/a-copy.md').reason).toMatch(/a\.md/);
    expect(itemOf(run.report, 'a.md').action).toBe('skip:unchanged');
    expect(run.charged).toBe(0);
    expect(run.report.summary.creditsSpent).toBe(0);
    expect((await ds.files()).length).toBe(3);
  });

  it('oversize, unsupported and secret-looking files are skipped with their reasons, for free', async () => {
    ws.write('huge.md', 'x'.repeat(5000));
    ws.write('diagram.png', 'png bytes');
    ws.write('.env', 'API_TOKEN=abc\n');
    ws.write('keys/id_rsa', '-----BEGIN OPENSSH PRIVATE KEY-----\n');
    ws.write('secrets.yaml', 'password: hunter2\n');

    const run = await syncCharged();

    expect(run.code).toBe(0);
    expect(itemOf(run.report, 'huge.md')).toMatchObject({ action: 'skip:too-large', credits: 0 });
    expect(itemOf(run.report, 'huge.md').reason).toMatch(/limits\.maxFileBytes/);
    expect(itemOf(run.report, 'diagram.png')).toMatchObject({ action: 'skip:unsupported', credits: 0 });
    expect(itemOf(run.report, 'diagram.png').reason).toMatch(/\.png/);
    expect(pathsWith(run.report, 'skip:secret')).toEqual(['.env', 'keys/id_rsa', 'secrets.yaml']);
    for (const path of ['.env', 'keys/id_rsa', 'secrets.yaml']) expect(itemOf(run.report, path).reason).toMatch(/secret/);
    expect(run.report.summary).toMatchObject({ uploaded: 0, skipped: 5, creditsSpent: 0 });
    expect(run.charged).toBe(0);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'c.csv', 'notes/b.txt']);
  });

  it('a deleted file is reported, costs nothing, and its remote copy remains', async () => {
    ws.remove('c.csv');

    const run = await syncCharged();
    const again = await syncCharged();

    expect(run.code).toBe(0);
    const item = itemOf(run.report, 'c.csv');
    expect(item).toMatchObject({ action: 'deleted', credits: 0 });
    expect(item.reason).toMatch(/remote copy remains/);
    expect(run.charged).toBe(0);
    expect(again.charged).toBe(0);
    expect(again.report.summary.uploaded).toBe(0);
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'c.csv', 'notes/b.txt']);
  });

  it('two new files with the same content in one run: one upload, one free duplicate', async () => {
    ws.write('new/one.md', '# Same words\n');
    ws.write('new/two.md', '# Same words\n');

    const run = await syncCharged();

    expect(run.report.items.filter((i) => i.path.startsWith('new/')).map((i) => [i.path, i.action, i.credits])).toEqual([
      ['new/one.md', 'upload', 5],
      ['new/two.md', 'skip:duplicate-content', 0],
    ]);
    expect(run.charged).toBe(5);
    expect((await ds.files()).filter((f) => f.name.startsWith('new/')).map((f) => f.name)).toEqual(['new/one.md']);
  });

  it('a deleted file restored with the same content costs nothing', async () => {
    ws.remove('c.csv');
    await syncCharged();
    ws.write('c.csv', 'x,y\n1,2\n');

    const run = await syncCharged();

    expect(itemOf(run.report, 'c.csv').credits).toBe(0);
    expect(run.charged).toBe(0);
    expect((await ds.files()).length).toBe(3);
    // Back in the source: tracked again, no longer counted as deleted by status.
    const status = await ws.run('status', '--json');
    expect(JSON.parse(status.stdout).tracked).toMatchObject({ files: 3, deleted: 0 });
  });

  it('a copy of a synced file is tracked with the status of the copy it points at, not as not uploaded', async () => {
    ws.write('copy-of-a.md', '# A\nalpha\n');

    const run = await syncCharged();

    expect(itemOf(run.report, 'copy-of-a.md')).toMatchObject({ action: 'skip:duplicate-content', credits: 0 });
    const state = openState(ws.statePath);
    try {
      const original = state.getTracked('docs', 'a.md');
      expect(original?.remoteStatus).not.toBeNull();
      expect(state.getTracked('docs', 'copy-of-a.md')).toMatchObject({
        remoteId: original?.remoteId,
        remoteStatus: original?.remoteStatus,
      });
    } finally {
      state.close();
    }
  });

  it('two files that swap contents cost nothing: both contents are already in the dataset', async () => {
    ws.write('a.md', 'bravo\n');
    ws.write('notes/b.txt', '# A\nalpha\n');

    const run = await syncCharged();

    expect([itemOf(run.report, 'a.md').credits, itemOf(run.report, 'notes/b.txt').credits]).toEqual([0, 0]);
    expect(run.charged).toBe(0);
  });
});
