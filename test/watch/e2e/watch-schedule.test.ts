import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { startDaemon, useChildren } from '../../helpers/daemon-children.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });

const children = useChildren();

type StatusFile = { pid: number; ready: boolean; waitingFor: string[]; lastSync: unknown };

describe('kbsync watch with watch.schedule', () => {
  it('outside the window it syncs nothing, not even the first sync, and says when the window opens', async () => {
    const ds = suite.svc.dataset();
    // One open minute a day, two hours from now: closed for the whole test.
    const opens = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 2 * 3600_000);
    const schedule = `${opens.getUTCMinutes()} ${opens.getUTCHours()} * * *`;
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { debounceMs: 100, rescanMinutes: 0.01, schedule } },
    });
    ws.write('a.md', '# A\n');
    const k = startDaemon(children, ws);
    const path = `${ws.statePath}.watch.json`;
    const status = (): StatusFile | null => (existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StatusFile) : null);
    const deadline = Date.now() + 20_000;
    while (!(status()?.pid === k.child.pid && status()?.waitingFor.some((w) => w.startsWith('the schedule')) === true)) {
      if (Date.now() > deadline) throw new Error(`no schedule wait in the status file: ${JSON.stringify(status())}\n${k.stderrSoFar()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // A change and several rescan periods (0.6 s each) pass: still nothing.
    ws.write('b.md', '# B\n');
    await new Promise((r) => setTimeout(r, 2000));
    const before = status();
    k.child.kill('SIGTERM');
    const exit = await k.exited;

    expect(exit.code).toBe(0);
    expect(before?.waitingFor).toContain(`the schedule (watch.schedule) to open at ${opens.toISOString()}: a sync waits for it`);
    expect(status()?.lastSync).toBeNull();
    expect(status()?.ready).toBe(false);
    expect(await ds.files()).toEqual([]);
    expect(exit.stderr).not.toMatch(/"msg":"sync cycle done"/);
    // The default events library (watch.watcher), chosen by measurement (docs/watch.md).
    expect(exit.stderr).toContain('"watcher":"node (fs.watch)"');
  });
});
