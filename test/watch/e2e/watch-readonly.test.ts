import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { useChildren, until, logsOf } from '../../helpers/daemon-children.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 120_000 });
const children = useChildren();

describe('kbsync watch on a read-only folder (a container volume mounted :ro)', () => {
  it('cannot prove file-system events with a probe file, so it polls, says why, and a file added there is synced', async () => {
    // The folder is read-only to the daemon alone: a bind mount onto itself with `ro`, in a mount
    // namespace of its own (root, as in CI, writes through any file mode); the test writes beside it.
    const readOnly = 'mount --bind "$KBSYNC_RO" "$KBSYNC_RO" && mount -o remount,bind,ro "$KBSYNC_RO" && exec "$0" "$@"';
    const prefix = ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', readOnly];
    const can = spawnSync(prefix[0] as string, [...prefix.slice(1), 'true'], {
      encoding: 'utf8',
      env: { ...process.env, KBSYNC_RO: '/tmp' },
    });
    expect(can.status, `this test needs mount namespaces (unshare --mount, as root): ${can.stderr}`).toBe(0);
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { watch: { debounceMs: 100, pollIntervalMs: 100, probeTimeoutMs: 5000 } },
    });
    ws.write('a.md', '# A\n');
    const k = spawnKbsync(['watch', '-c', ws.configPath], ws.root, { KBSYNC_RO: ws.docs }, prefix);
    children.push(k);
    await until('the first sync', () => logsOf(k).some((l) => l.msg === 'sync cycle done'));
    ws.write('b.md', '# B\n');
    await until('b.md uploaded', async () => (await ds.files()).some((f) => f.name === 'b.md'));
    k.child.kill('SIGTERM');
    const exit = await k.exited;

    expect(exit.code).toBe(0);
    expect(logsOf(k).find((l) => l.msg === 'watching')).toMatchObject({
      source: 'docs',
      backend: 'polling',
      note: expect.stringContaining('the folder is not writable, so no probe file could prove its file-system events'),
    });
    expect(logsOf(k).some((l) => String(l.msg).startsWith('no file-system event arrived'))).toBe(false);
  });
});
