import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { spawnKbsync, type ChildExit, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { startDaemon, logsOf, until, useChildren } from '../../helpers/daemon-children.js';
import { openState } from '../../../src/sync/state/index.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();

type StatusTracked = { files: number; deleted: number };

function workspace(): Workspace {
  const ds = suite.svc.dataset();
  return createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { watch: { debounceMs: 200 } } });
}

/** `kbsync ARGS -c kbsync.yaml` as a child process, to its end. */
async function cli(ws: Workspace, ...args: string[]): Promise<ChildExit> {
  const k = spawnKbsync([...args, '-c', ws.configPath], ws.root);
  children.push(k);
  return k.exited;
}

async function statusOf(ws: Workspace): Promise<{ tracked: StatusTracked; text: string }> {
  const json = await cli(ws, 'status', '--json');
  const text = await cli(ws, 'status');
  expect([json.code, text.code]).toEqual([0, 0]);
  return { tracked: (JSON.parse(json.stdout) as { tracked: StatusTracked }).tracked, text: text.stdout };
}

/** Moves docs/a.md out of the source to a sibling folder (same file system: same inode and mtime), or back. */
const moveOut = (ws: Workspace): void => renameSync(join(ws.docs, 'a.md'), join(ws.root, 'a.md.away'));
const moveBack = (ws: Workspace): void => renameSync(join(ws.root, 'a.md.away'), join(ws.docs, 'a.md'));

/** The credits spent today, read beside a running daemon (a reader of the state, no lock). */
function spentToday(ws: Workspace): number {
  const state = openState(ws.statePath, { access: 'reader' });
  try {
    return state.creditsUsed(null).spent.day;
  } finally {
    state.close();
  }
}

const cyclesOf = (k: KbsyncChild): number => logsOf(k).filter((l) => l.msg === 'sync cycle done').length;

describe('a file moved out of its source and back with the same stat', () => {
  it('two kbsync sync runs: status no longer counts it deleted, and nothing is paid again', async () => {
    const ws = workspace();
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    expect((await cli(ws, 'sync')).code).toBe(0);
    const spent = spentToday(ws);
    moveOut(ws);
    expect((await cli(ws, 'sync')).code).toBe(0);
    expect((await statusOf(ws)).tracked).toMatchObject({ files: 1, deleted: 1 });
    moveBack(ws);
    expect((await cli(ws, 'sync')).code).toBe(0);

    const after = await statusOf(ws);
    expect(after.tracked).toMatchObject({ files: 2, deleted: 0 });
    expect(after.text).not.toMatch(/deleted locally/);
    expect(spentToday(ws)).toBe(spent);
  });

  it('under kbsync watch: status no longer counts it deleted, and nothing is paid again', async () => {
    const ws = workspace();
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    const k = startDaemon(children, ws);
    await until('the first cycle', () => cyclesOf(k) >= 1);
    const spent = spentToday(ws);
    moveOut(ws);
    await until('the delete seen', () => logsOf(k).some((l) => l.msg === 'file' && l.path === 'a.md' && l.action === 'deleted'));
    const cycles = cyclesOf(k);
    moveBack(ws);
    await until('a cycle after the move back', () => cyclesOf(k) > cycles);
    const whileRunning = await statusOf(ws);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);

    expect(whileRunning.tracked).toMatchObject({ files: 2, deleted: 0 });
    expect((await statusOf(ws)).tracked).toMatchObject({ files: 2, deleted: 0 });
    expect(logsOf(k).filter((l) => l.msg === 'file' && l.path === 'a.md' && l.action === 'upload')).toHaveLength(1);
    expect(spentToday(ws)).toBe(spent);
  });
});

describe('copies settled by the daemon start-up sync', () => {
  it('each gets its "remote processing" line and counter once, as the remote poll gives them', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { watch: { debounceMs: 200 } } });
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    ws.write('broken.json', '{"unterminated": [1,\n');
    expect((await cli(ws, 'sync')).code).toBe(0);
    // The run ended with its copies still processing, as the state says; the service has settled them since.
    expect((await statusOf(ws)).tracked).toMatchObject({ files: 3 });
    await until('the service processed the copies', async () =>
      (await ds.files()).every((f) => f.status === 'processed' || f.status === 'failed'),
    );
    const k = startDaemon(children, ws);
    await until('the first cycle', () => cyclesOf(k) >= 1);
    // The remote poll's first look after the cycle (2 s) finds nothing more to log.
    await new Promise((r) => setTimeout(r, 3000));
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);

    const lines = logsOf(k).filter((l) => l.msg.startsWith('remote processing'));
    expect(lines.map((l) => [l.msg, l.path]).sort()).toEqual([
      ['remote processing done', 'a.md'],
      ['remote processing done', 'b.md'],
      ['remote processing failed', 'broken.json'],
    ]);
    expect(lines.find((l) => l.path === 'broken.json')?.next).toMatch(/^not reprocessed: the service says the same file would fail again/);
    const counters = (JSON.parse(readFileSync(`${ws.statePath}.watch.json`, 'utf8')) as { counters: Record<string, number> }).counters;
    expect([counters.processed, counters.failures]).toEqual([2, 1]);
  });
});
