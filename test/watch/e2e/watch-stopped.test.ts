import { existsSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { until, untilCopiesSettled, useChildren } from '../../helpers/daemon-children.js';

/**
 * A daemon that is stopped (SIGSTOP: a laptop's lid, a debugger) holds its lock and its socket but
 * answers nothing: `status` says it has not answered for N s, and `plan` plans by itself within 2 s,
 * saying why. A daemon idle for longer than that still beats, and is not taken for a stopped one.
 */
const suite = useE2eSuite({ before: ensureDist, timeoutMs: 240_000 });
const children = useChildren();

type StatusJson = { daemon: { pid: number; ready: boolean; heartbeat?: { at: string; silentSeconds: number; answering: boolean } } | null };

function kbsync(ws: Workspace, ...args: string[]): KbsyncChild {
  const k = spawnKbsync([...args, '-c', ws.configPath], ws.root);
  children.push(k);
  return k;
}

async function statusJson(ws: Workspace): Promise<StatusJson> {
  const run = await kbsync(ws, 'status', '--json').exited;
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as StatusJson;
}

describe('kbsync status and plan beside a daemon that does not answer', () => {
  it('SIGSTOP: plan falls back at once and says why; status says since when it has not answered; SIGCONT: answering again', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { watch: { debounceMs: 300 } } });
    ws.write('a.md', '# A\n\nThe first page.\n');
    ws.write('b.md', '# B\n\nThe second page.\n');
    const statusPath = `${ws.statePath}.watch.json`;
    const daemon = kbsync(ws, 'watch');
    const pid = daemon.child.pid as number;
    const file = (): { ready: boolean; pid: number; updatedAt: string } | null =>
      existsSync(statusPath) ? (JSON.parse(readFileSync(statusPath, 'utf8')) as { ready: boolean; pid: number; updatedAt: string }) : null;
    await until('the daemon ready', () => file()?.ready === true && file()?.pid === pid, 60_000);
    await untilCopiesSettled(ws.statePath);

    // Idle, with no snapshot written for longer than three beats: it beats, so it is not silent.
    await until('no snapshot written for 16 s', () => Date.now() - Date.parse(file()?.updatedAt ?? '') > 16_000, 60_000);
    const idle = await kbsync(ws, 'status').exited;
    expect(idle.stdout).toMatch(new RegExp(`^daemon: +running \\(pid ${pid}, .*\\), ready$`, 'm'));
    const idleJson = await statusJson(ws);
    expect(idleJson.daemon?.heartbeat?.answering).toBe(true);
    expect(statSync(statusPath).mtimeMs).toBeGreaterThan(Date.parse(file()?.updatedAt ?? '') + 10_000);

    const fresh = await kbsync(ws, 'plan', '--no-daemon').exited;
    daemon.child.kill('SIGSTOP');
    try {
      const plan = await kbsync(ws, 'plan').exited;
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stderr).toContain(`the running kbsync watch (pid ${pid}) did not answer within 2 s`);
      expect(plan.stderr).not.toContain('answered by the running kbsync watch');
      expect(plan.stdout).toBe(fresh.stdout);

      await until('three beats missed', () => Date.now() - statSync(statusPath).mtimeMs > 16_000, 60_000);
      const stopped = await kbsync(ws, 'status').exited;
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toMatch(new RegExp(`^daemon: +not answering for (1[6-9]|[2-9]\\d) s \\(pid ${pid}, `, 'm'));
      expect(stopped.stdout).toContain(`kill -CONT ${pid}`);
      const stoppedJson = await statusJson(ws);
      expect(stoppedJson.daemon?.pid).toBe(pid);
      expect(stoppedJson.daemon?.heartbeat?.answering).toBe(false);
      expect(stoppedJson.daemon?.heartbeat?.silentSeconds).toBeGreaterThanOrEqual(16);
    } finally {
      daemon.child.kill('SIGCONT');
    }

    await until('the daemon beats again', () => Date.now() - statSync(statusPath).mtimeMs < 10_000, 30_000);
    expect((await statusJson(ws)).daemon?.heartbeat?.answering).toBe(true);
    const answered = await kbsync(ws, 'plan').exited;
    expect(answered.stderr).toContain(`answered by the running kbsync watch (pid ${pid})`);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  }, 180_000);
});
