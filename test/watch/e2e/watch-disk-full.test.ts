import { execFileSync } from 'node:child_process';
import { request } from 'undici';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { isUpload } from '../../helpers/fault-proxy.js';
import type { KbsyncChild } from '../../helpers/kbsync-child.js';
import { startDaemon, logsOf, untilDaemonReady, until, useChildren } from '../../helpers/daemon-children.js';

// The state's folder on a small file system of its own (tmpfs, mounted as root), filled up and freed again.
const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();
const mounts: string[] = [];
afterAll(() => {
  for (const dir of mounts.splice(0)) execFileSync('umount', ['-l', dir]);
});

function smallDisk(bytes: number): string {
  const dir = suite.temp.make('kbsync-disk-full-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
  } catch (err) {
    throw new Error(`this test mounts a small tmpfs and needs root (run the suite as root, as CI does): ${String(err)}`);
  }
  mounts.push(dir);
  return dir;
}

/** Writes `path` until the disk is full: returns how much it wrote. */
function fill(path: string): number {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return written;
}

function watch(ws: Workspace): KbsyncChild {
  return startDaemon(children, ws, ['--http', '127.0.0.1:0']);
}

type StatusFile = { ready: boolean; http: string | null; lastError: { message: string } | null };
const statusFile = (statePath: string): StatusFile | null => {
  const path = `${statePath}.watch.json`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StatusFile) : null;
};

describe('kbsync watch with its state on a full disk', () => {
  it('the disk fills while an upload is under way, then space returns: every file is sent once, with no restart and nothing stuck', async () => {
    const ds = suite.svc.dataset();
    const disk = smallDisk(8 * 1024 * 1024);
    mkdirSync(join(disk, 'state'));
    const statePath = join(disk, 'state', 'state.db');
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      config: { state: statePath, watch: { debounceMs: 200, rescanMinutes: 60 } },
    });
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await untilDaemonReady(k, `${statePath}.watch.json`);
    const http = statusFile(statePath)?.http as string;

    // The first upload's call is made with its outbox row in flight; the disk fills before it is answered,
    // so the state cannot record its outcome.
    const filler = join(disk, 'filler');
    let filled = false;
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (!filled && isUpload(req) && req.headers['x-api-key'] === ds.apiKey) {
          filled = true;
          fill(filler);
        }
        return { kind: 'forward' };
      },
    });
    // Files big enough that their rows and the journal cannot fit in what is left.
    for (let i = 0; i < 12; i++) ws.write(`full-${i}.md`, `# Full ${i}\n\n${'words of a document '.repeat(400)}\n`);
    await until(
      'the daemon to say the disk is full',
      () => logsOf(k).some((l) => /full|SQLITE_FULL|ENOSPC/i.test(JSON.stringify(l.err ?? ''))),
      30_000,
    );
    await new Promise((r) => setTimeout(r, 3000));
    expect(k.child.exitCode).toBeNull();
    // Its status file cannot be written now: /readyz, from the daemon's memory, says the sync fails.
    const readyz = await request(`http://${http}/readyz`);
    expect(readyz.statusCode).toBe(503);
    expect(await readyz.body.text()).toMatch(/last sync failed.*(full|SQLITE_FULL|ENOSPC)/i);

    expect(filled).toBe(true);
    rmSync(filler);
    const freedAt = Date.now();
    await until(
      'every file in the dataset',
      async () => {
        const names = new Set((await ds.files()).map((f) => f.name));
        return Array.from({ length: 12 }, (_, i) => `full-${i}.md`).every((n) => names.has(n));
      },
      90_000,
    );
    // Within one back-off step of the space returning (at most 60 s), with no file event.
    expect(Date.now() - freedAt).toBeLessThan(75_000);
    await until('the daemon idle with nothing left to do', async () => {
      const status = await ws.run('status');
      return /pending work: +none/.test(status.stdout);
    });
    const files = await ds.files();
    // a.md and the twelve: each bought once.
    expect(files).toHaveLength(13);
    await until('no copy left processing', async () => (await ds.files()).every((f) => f.status === 'processed'), 30_000);
    expect(logsOf(k).some((l) => /is in_flight, expected pending/.test(JSON.stringify(l)))).toBe(false);
    expect(statusFile(statePath)?.ready).toBe(true);
    const plan = await ws.runJson('plan', '--no-daemon');
    expect(plan.report.summary.uploaded).toBe(0);
  }, 240_000);
});
