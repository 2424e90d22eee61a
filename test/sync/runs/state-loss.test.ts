import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, pathsWith, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();

const FILES = ['a.md', 'data/c.csv', 'data/d.json', 'guides/b.txt', 'w.md'];
let ds: E2eDataset;
let ws: Workspace;
let afterFirst: number;
/** A workspace synced once (five files), with two sources so remote names carry the source prefix. */
beforeEach(async () => {
  ds = suite.svc.dataset({ credits: 1000 });
  ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.svc.url,
    apiKey: ds.apiKey,
    config: {
      sources: [
        { name: 'docs', path: './docs' },
        { name: 'wiki', path: './wiki' },
      ],
    },
  });
  ws.write('a.md', '# A\n');
  ws.write('guides/b.txt', 'bravo\n');
  ws.write('data/c.csv', 'x,y\n1,2\n');
  ws.write('data/d.json', '{"d": 4}\n');
  mkdirSync(join(ws.root, 'wiki'));
  writeFileSync(join(ws.root, 'wiki', 'w.md'), '# Wiki page\n');
  const first = await ws.runJson('sync');
  expect(first.report.summary).toMatchObject({ uploaded: 5, creditsSpent: 25 });
  expect((await ds.files()).map((f) => f.name).sort()).toEqual([
    'docs/a.md',
    'docs/data/c.csv',
    'docs/data/d.json',
    'docs/guides/b.txt',
    'wiki/w.md',
  ]);
  afterFirst = await ds.balance();
});

describe('a lost or damaged state database', () => {
  it('deleted (with its -wal and -shm): the rerun rebuilds it from the remote listing and uploads nothing', async () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(ws.statePath + suffix, { force: true });
    ws.write('e.md', '# E, new since the state was lost\n');

    const plan = await ws.runJson('plan');
    const rerun = await ws.runJson('sync');
    const again = await ws.runJson('sync');

    expect(existsSync(ws.statePath)).toBe(true);
    expect(pathsWith(plan.report, 'upload')).toEqual(['e.md']);
    expect(rerun.code).toBe(0);
    expect(pathsWith(rerun.report, 'skip:unchanged')).toEqual([...FILES].sort());
    expect(pathsWith(rerun.report, 'upload')).toEqual(['e.md']);
    expect(rerun.report.summary).toMatchObject({ uploaded: 1, creditsSpent: 5 });
    expect(afterFirst - (await ds.balance())).toBe(5);
    expect(again.report.summary).toMatchObject({ uploaded: 0, unchanged: 6, creditsSpent: 0 });
    expect((await ds.files()).length).toBe(6);
  });

  it('deleted, then recreated empty by a command that never lists (status, explain): the next sync still rebuilds it', async () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(ws.statePath + suffix, { force: true });
    const status = await ws.runJson('status');
    const explain = await ws.run('explain', 'a.md');
    expect(status.code).toBe(0);
    expect(explain.code).toBe(0);
    expect(existsSync(ws.statePath)).toBe(true);

    const rerun = await ws.runJson('sync');

    expect(rerun.code).toBe(0);
    expect(pathsWith(rerun.report, 'skip:unchanged')).toEqual([...FILES].sort());
    expect(rerun.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });
    expect(afterFirst - (await ds.balance())).toBe(0);
    expect((await ds.files()).length).toBe(5);
  });

  it('deleted, and the first sync after cannot reach the service: the one after still rebuilds instead of buying again', async () => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(ws.statePath + suffix, { force: true });
    const reachable = suite.svc.url;
    ws.configure({ target: { kind: 'remote', baseUrl: 'http://127.0.0.1:9', apiKey: ds.apiKey, plan: 'basic' } });
    const offline = await ws.run('sync');
    expect(offline.code).not.toBe(0);
    ws.configure({ target: { kind: 'remote', baseUrl: reachable, apiKey: ds.apiKey, plan: 'basic' } });

    const rerun = await ws.runJson('sync');

    expect(rerun.code).toBe(0);
    expect(rerun.report.summary).toMatchObject({ uploaded: 0, unchanged: 5, creditsSpent: 0 });
    expect(afterFirst - (await ds.balance())).toBe(0);
  });

  it('once checked against the dataset (even an empty one), the state is not listed again: a plan then works offline', async () => {
    const fresh = suite.svc.dataset({ credits: 100 });
    const other = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: fresh.apiKey });
    other.write('one.md', '# One\n');
    const unreachable = { target: { kind: 'remote', baseUrl: 'http://127.0.0.1:9', apiKey: fresh.apiKey, plan: 'basic' } };

    other.configure(unreachable);
    const beforeAnyCheck = await other.run('plan');
    other.configure({ target: { kind: 'remote', baseUrl: suite.svc.url, apiKey: fresh.apiKey, plan: 'basic' } });
    const first = await other.runJson('sync');
    other.configure(unreachable);
    const afterCheck = await other.runJson('plan');

    expect(beforeAnyCheck.code).not.toBe(0);
    expect(first.report.summary).toMatchObject({ uploaded: 1, creditsSpent: 5 });
    expect(afterCheck.code).toBe(0);
    expect(afterCheck.report.summary).toMatchObject({ uploaded: 0, unchanged: 1 });
  });

  it('garbage bytes: the file is moved aside, the state rebuilt, nothing uploaded again', async () => {
    for (const suffix of ['-wal', '-shm']) rmSync(ws.statePath + suffix, { force: true });
    writeFileSync(ws.statePath, Buffer.from('this is not a SQLite database, just bytes that used to be one \x00\x01\x02'.repeat(200)));

    const rerun = await ws.run('sync');
    const status = await ws.runJson('status');

    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toMatch(/state database was corrupt; moved it to .*corrupt/);
    const aside = readdirSync(dirname(ws.statePath)).filter((n) => n.startsWith(`${basename(ws.statePath)}.corrupt-`));
    expect(aside.length).toBe(1);
    expect(rerun.stdout).toMatch(/0 uploaded, 5 unchanged/);
    expect(afterFirst - (await ds.balance())).toBe(0);
    expect(status.report.items.map((i) => i.path).sort()).toEqual([...FILES].sort());
    expect(status.report.items.every((i) => typeof i.remoteId === 'string')).toBe(true);
    expect((await ds.files()).length).toBe(5);
  });

  it('deleted after a file changed (two remote copies of one name): only what differs from the newest copy is uploaded', async () => {
    ws.write('a.md', '# A, second version\n');
    const changed = await ws.runJson('sync');
    expect(changed.report.summary).toMatchObject({ uploaded: 1, creditsSpent: 5 });
    for (const suffix of ['', '-wal', '-shm']) rmSync(ws.statePath + suffix, { force: true });
    ws.write('guides/b.txt', 'bravo, edited while the state was gone\n');
    const balance = await ds.balance();

    const rerun = await ws.runJson('sync');

    expect(rerun.code).toBe(0);
    expect(pathsWith(rerun.report, 'upload')).toEqual(['guides/b.txt']);
    expect(rerun.report.items.filter((i) => i.path === 'a.md').map((i) => i.action)).toEqual(['skip:unchanged']);
    expect(balance - (await ds.balance())).toBe(5);
  });
});
