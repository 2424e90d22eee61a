import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { startDaemon, useChildren, until, logsOf, type LogLine } from '../../helpers/daemon-children.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { type KbsyncChild } from '../../helpers/kbsync-child.js';
import { freshDatabase } from '../../helpers/postgres.js';

/*
 * `kbsync watch` (the built CLI, as a child process) pointing a path back at a copy the dataset holds:
 * an edit undone costs nothing, on the SQLite state and on the PostgreSQL one, and the index the daemon
 * keeps between cycles stays right after it (the path is not planned again, a later edit is paid once).
 */

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();

const fileLines = (k: KbsyncChild, path: string, action: string): LogLine[] =>
  logsOf(k).filter((l) => l.msg === 'file' && l.path === path && l.action === action && l.outcome === 'done');

const STATES = [
  { name: 'sqlite', state: async (): Promise<string | undefined> => undefined },
  { name: 'postgres', state: async (): Promise<string | undefined> => freshDatabase('watch_reuse') },
];

describe.each(STATES)('kbsync watch reuses held copies ($name state)', ({ state }) => {
  it('an edit undone costs nothing; a later edit and its undo: paid once, then free', async () => {
    const url = await state();
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { debounceMs: 200 }, ...(url === undefined ? {} : { state: url }) },
    });
    ws.write('a.md', '# A\none\n');
    ws.write('b.md', '# B\n');
    const k = startDaemon(children, ws);
    await until('the first uploads', () => fileLines(k, 'a.md', 'upload').length === 1 && fileLines(k, 'b.md', 'upload').length === 1);
    const first = String((await ds.files()).find((f) => f.name === 'a.md')?.id);

    ws.write('a.md', '# A\ntwo\n');
    await until('the edit uploaded', () => fileLines(k, 'a.md', 'upload').length === 2);
    const paid = 1000 - (await ds.balance());
    expect(paid).toBe(15);

    ws.write('a.md', '# A\none\n');
    await until('the undo reused', () => fileLines(k, 'a.md', 'reuse').length === 1);
    expect(fileLines(k, 'a.md', 'reuse')[0]).toMatchObject({ credits: 0 });
    expect(String(fileLines(k, 'a.md', 'reuse')[0]?.reason)).toMatch(new RegExp(`^the dataset holds this content \\(file ${first}, `));
    expect(1000 - (await ds.balance())).toBe(paid);

    // Another change goes through the kept index: a.md is not planned again, b.md is paid once.
    ws.write('b.md', '# B\nedited\n');
    await until('b.md uploaded again', () => fileLines(k, 'b.md', 'upload').length === 2);
    ws.write('a.md', '# A\nthree\n');
    await until('a.md three uploaded', () => fileLines(k, 'a.md', 'upload').length === 3);
    ws.write('a.md', '# A\none\n');
    await until('one reused again', () => fileLines(k, 'a.md', 'reuse').length === 2);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);

    expect(fileLines(k, 'a.md', 'reuse').map((l) => String(l.reason).includes(`(file ${first}, `))).toEqual([true, true]);
    expect(1000 - (await ds.balance())).toBe(paid + 10);
    expect((await ds.files()).filter((f) => f.name === 'a.md')).toHaveLength(3);
    const view = openState(url ?? ws.statePath, { lock: false });
    try {
      expect(view.getTracked('docs', 'a.md')).toMatchObject({ remoteId: first, lastAction: 'reuse' });
    } finally {
      view.close();
    }
  });
});
