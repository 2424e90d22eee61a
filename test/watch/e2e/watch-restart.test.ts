import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDist, KBSYNC_BIN } from '../../helpers/build-dist.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { startDaemon, logsOf, until, useChildren } from '../../helpers/daemon-children.js';

/**
 * Restarts. A daemon killed with SIGKILL is a zombie until its parent reaps it (a shell busy elsewhere, a
 * supervisor slow to wait): its lock names a pid that signal 0 still reaches. A restart takes that
 * lock over at once instead of being refused until the reap. And what one daemon logged as deleted
 * is not logged again by the next.
 */
const suite = useE2eSuite({ before: ensureDist, timeoutMs: 240_000 });
const children = useChildren();

/** The state letter of /proc/PID/stat (R, S, Z...), or null once the pid is gone. */
function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** The status file's pid once it says ready. */
function readyPid(ws: Workspace): number | null {
  const path = `${ws.statePath}.watch.json`;
  if (!existsSync(path)) return null;
  const s = JSON.parse(readFileSync(path, 'utf8')) as { ready: boolean; pid: number; stoppedAt: string | null };
  return s.ready && s.stoppedAt === null ? s.pid : null;
}

describe('kbsync watch restarted right after kill -9', () => {
  it('takes over the lock of a killed daemon its parent has not reaped yet (a zombie)', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { watch: { debounceMs: 300 } } });
    ws.write('a.md', '# A\n\nThe first page.\n');
    // The daemon's parent becomes `sleep`, which never waits for a child: once killed, the daemon stays a zombie.
    const parent: ChildProcess = spawn(
      'sh',
      ['-c', `"$0" "$1" watch -c "$2" 2>"$3" & exec sleep 600`, process.execPath, KBSYNC_BIN, ws.configPath, join(ws.root, 'first.log')],
      { cwd: ws.root, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws.root }, stdio: 'ignore' },
    );
    try {
      await until('the first daemon ready', () => readyPid(ws) !== null, 60_000);
      const first = readyPid(ws) as number;
      expect(first).not.toBe(parent.pid);

      process.kill(first, 'SIGKILL');
      await until('the first daemon a zombie', () => procState(first) === 'Z');

      const second = spawnKbsync(['watch', '-c', ws.configPath], ws.root);
      children.push(second);
      const exited = second.exited.then((r) => r);
      await until(
        'the second daemon ready, or its end',
        async () => {
          if (second.child.exitCode !== null) return true;
          return readyPid(ws) === second.child.pid;
        },
        60_000,
      );
      if (second.child.exitCode !== null) {
        const r = await exited;
        throw new Error(`the restart exited ${r.code}: ${r.stderr}`);
      }
      // Still a zombie: the lock was taken over, not freed by the reap.
      expect(procState(first)).toBe('Z');
      expect(logsOf(second).some((l) => l.msg === 'took over the lock of a kbsync that is no longer running' && l.pid === first)).toBe(
        true,
      );
      const status = await spawnKbsync(['status', '-c', ws.configPath], ws.root).exited;
      expect(status.stdout).toContain(`daemon:              running (pid ${second.child.pid}`);
      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    } finally {
      parent.kill('SIGKILL');
    }
  }, 180_000);

  it('a deletion logged by one daemon is not logged again by the next one on the same state; a new one is', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { watch: { debounceMs: 300 } } });
    for (const name of ['a', 'gone', 'later']) ws.write(`${name}.md`, `# ${name}\n\nThe page ${name}.\n`);
    const deletions = (k: KbsyncChild): unknown[] =>
      logsOf(k)
        .filter((l) => l.msg === 'file' && l.action === 'deleted')
        .map((l) => l.path);
    const start = async (): Promise<KbsyncChild> => {
      const k = startDaemon(children, ws);
      await until('the daemon ready', () => readyPid(ws) === k.child.pid && logsOf(k).some((l) => l.msg === 'sync cycle done'), 60_000);
      return k;
    };
    const stop = async (k: KbsyncChild): Promise<void> => {
      k.child.kill('SIGTERM');
      expect((await k.exited).code).toBe(0);
    };

    const first = await start();
    ws.remove('gone.md');
    await until('the deletion logged', () => deletions(first).length === 1);
    await stop(first);
    expect(deletions(first)).toEqual(['gone.md']);

    const second = await start();
    ws.remove('later.md');
    await until('the new deletion logged', () => deletions(second).length > 0);
    await stop(second);
    expect(deletions(second)).toEqual(['later.md']);
  }, 180_000);
});
