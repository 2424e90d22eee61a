import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, readlinkSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { ensureDist } from '../../helpers/build-dist.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, type Workspace, type WorkspaceConfig } from '../../helpers/e2e-workspace.js';
import { isUpload } from '../../helpers/fault-proxy.js';
import { killHard, spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { spawnSync } from 'node:child_process';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { startDaemon, useChildren, until, logsOf, type LogLine, untilDaemonReady } from '../../helpers/daemon-children.js';

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });

type StatusFile = {
  pid: number;
  ready: boolean;
  http: string | null;
  stoppedAt: string | null;
  counters: Record<string, number>;
  lastSync: { reasons: string[] } | null;
  watches: { backend: string; note: string | null; folders?: { polled: number; watched: number } }[];
};

const children = useChildren();

function workspace(ds: E2eDataset, o: { via?: 'proxy'; config?: Partial<WorkspaceConfig> } = {}): Workspace {
  const baseUrl = o.via === 'proxy' ? suite.proxy.url : suite.svc.url;
  return createWorkspace(suite.temp.make(), { baseUrl, apiKey: ds.apiKey, config: { watch: { debounceMs: 300 }, ...o.config } });
}

function watch(ws: Workspace, ...args: string[]): KbsyncChild {
  return startDaemon(children, ws, args);
}

/** The daemon's log lines of done uploads of `path`. */
const uploadsOf = (k: KbsyncChild, path: string): LogLine[] =>
  logsOf(k).filter((l) => l.msg === 'file' && l.path === path && l.action === 'upload' && l.outcome === 'done');
const cyclesOf = (k: KbsyncChild): LogLine[] => logsOf(k).filter((l) => l.msg === 'sync cycle done');

function statusFile(ws: Workspace): StatusFile | null {
  const path = `${ws.statePath}.watch.json`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StatusFile) : null;
}

/** The inodes of the folders process `pid` watches with inotify, from /proc/PID/fdinfo. */
function inotifyInodesOf(pid: number): Set<number> {
  const inodes = new Set<number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    if (readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' }) !== 'anon_inode:inotify') continue;
    for (const m of readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').matchAll(/^inotify wd:\S+ ino:([0-9a-f]+) /gm))
      inodes.add(parseInt(m[1] as string, 16));
  }
  return inodes;
}

async function ready(ws: Workspace, k: KbsyncChild): Promise<void> {
  await untilDaemonReady(k, `${ws.statePath}.watch.json`);
}

async function copies(ds: E2eDataset): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of await ds.files()) out[f.name] = (out[f.name] ?? 0) + 1;
  return out;
}

async function stop(k: KbsyncChild): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  k.child.kill('SIGTERM');
  return k.exited;
}

describe('kbsync watch as a child process against the local service', () => {
  it('follows a create, a modify, a rename, a delete and an atomic save, each with one line and its reason', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    ws.write('notes.md', '# Notes v1\n');
    const k = watch(ws);
    await ready(ws, k);

    ws.write('b.md', '# B\n');
    await until('b.md uploaded', () => uploadsOf(k, 'b.md').length === 1);
    ws.write('a.md', '# A, edited\n');
    await until('a.md uploaded again', () => uploadsOf(k, 'a.md').length === 2);
    ws.move('b.md', 'c.md');
    await until('the rename seen', () => logsOf(k).some((l) => l.msg === 'file' && l.path === 'c.md' && l.action === 'rename'));
    ws.remove('a.md');
    await until('the delete seen', () => logsOf(k).some((l) => l.msg === 'file' && l.path === 'a.md' && l.action === 'deleted'));
    // An editor's atomic save: the new content in a temp file, renamed over the old one.
    writeFileSync(join(ws.docs, '.notes.md.swp'), '# Notes v2\n');
    renameSync(join(ws.docs, '.notes.md.swp'), join(ws.docs, 'notes.md'));
    await until('notes.md uploaded again', () => uploadsOf(k, 'notes.md').length === 2);
    const exit = await stop(k);

    expect(exit.code).toBe(0);
    expect(uploadsOf(k, 'c.md')).toHaveLength(0);
    expect(uploadsOf(k, 'b.md')).toHaveLength(1);
    expect(logsOf(k).find((l) => l.path === 'c.md' && l.action === 'rename')?.reason).toMatch(/b\.md/);
    // The cycle's line counts the rename: not "0 uploaded, 0 unchanged" alone.
    const lines = logsOf(k);
    const renameAt = lines.findIndex((l) => l.path === 'c.md' && l.action === 'rename');
    expect(lines.slice(renameAt).find((l) => l.msg === 'sync cycle done')).toMatchObject({ uploaded: 0, renamed: 1 });
    expect(logsOf(k).some((l) => l.path === '.notes.md.swp' && l.action === 'upload')).toBe(false);
    // 2 first uploads, b.md, a.md again, notes.md again: 5 uploads of 5 credits.
    expect(await copies(ds)).toEqual({ 'a.md': 2, 'b.md': 1, 'notes.md': 2 });
    expect(100_000 - (await ds.balance())).toBe(25);
  });

  it('a burst of 1,000 new files: all synced, none twice, in one cycle and with one reindex', async () => {
    const ds = suite.svc.dataset({ plan: 'pro' });
    const ws = workspace(ds, { config: { watch: { debounceMs: 500 }, upload: { concurrency: 8, requestsPerSecond: 1000 } } });
    ws.configure({ target: { kind: 'remote', baseUrl: suite.svc.url, apiKey: ds.apiKey, plan: 'pro' } });
    const k = watch(ws);
    await ready(ws, k);
    const cyclesBefore = cyclesOf(k).length;
    for (let i = 0; i < 1000; i++) ws.write(`burst/d${i % 10}/f${i}.md`, `# file ${i}\n`);
    await until('1,000 files in the dataset', async () => (await ds.files()).length === 1000, 60_000);
    await until('the cycle after the burst ended', () => (statusFile(ws)?.counters.uploads ?? 0) >= 1000);
    const exit = await stop(k);

    const uploads = logsOf(k).filter((l) => l.msg === 'file' && l.action === 'upload' && l.outcome === 'done');
    const burstCycles = cyclesOf(k)
      .slice(cyclesBefore)
      .filter((l) => Number(l.uploaded) > 0);
    const reindexes = cyclesOf(k).filter((l) => l.reindex === 'done');
    expect(exit.code).toBe(0);
    expect(uploads).toHaveLength(1000);
    expect(new Set(uploads.map((l) => l.path)).size).toBe(1000);
    expect(Object.values(await copies(ds)).every((n) => n === 1)).toBe(true);
    expect(burstCycles).toHaveLength(1);
    expect(reindexes).toHaveLength(1);
    expect(100_000 - (await ds.balance())).toBe(1000 * 5 + 2);
    // Its own waits allow 60 s for the uploads: the suite's 30 s must not cut them short on a loaded machine.
  }, 120_000);

  it('an autosave storm (a write every 50 ms for 1.5 s) gives one upload, after the file settles', async () => {
    const ds = suite.svc.dataset();
    // A debounce far above the 50 ms between writes: a busy machine that stalls the writer for a moment
    // must not split the storm in two (that would be the test's timing, not the daemon's).
    const ws = workspace(ds, { config: { watch: { debounceMs: 2000 } } });
    const k = watch(ws);
    await ready(ws, k);
    for (let i = 0; i < 30; i++) {
      ws.write('draft.md', `# Draft\n${'typing '.repeat(i)}\n`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await until('draft.md uploaded', () => uploadsOf(k, 'draft.md').length > 0);
    const cycles = cyclesOf(k).length;
    // One more cycle (a rescan-like quiet pass) must not upload it again: touch another file and wait for that cycle.
    ws.write('other.md', '# other\n');
    await until('the next cycle', () => cyclesOf(k).length > cycles);
    await stop(k);

    expect(uploadsOf(k, 'draft.md')).toHaveLength(1);
    expect((await ds.files()).filter((f) => f.name === 'draft.md')).toHaveLength(1);
    expect(readFileSync(join(ws.docs, 'draft.md'), 'utf8')).toContain('typing '.repeat(29));
  });

  it('finds at start what changed while it was stopped', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('kept.md', '# kept\n');
    ws.write('edited.md', '# v1\n');
    ws.write('gone.md', '# gone\n');
    expect((await ws.run('sync')).code).toBe(0);
    ws.write('edited.md', '# v2\n');
    ws.write('new.md', '# new\n');
    ws.remove('gone.md');
    // -c FILE, from another folder: the sources, state and target are FILE's.
    const k = spawnKbsync(['watch', '-c', ws.configPath], suite.temp.make());
    children.push(k);
    await ready(ws, k);
    await stop(k);

    const first = cyclesOf(k)[0];
    expect(first).toMatchObject({ reasons: ['start'], uploaded: 2, unchanged: 1 });
    expect(uploadsOf(k, 'edited.md')).toHaveLength(1);
    expect(uploadsOf(k, 'new.md')).toHaveLength(1);
    expect(uploadsOf(k, 'kept.md')).toHaveLength(0);
    expect(logsOf(k).some((l) => l.path === 'gone.md' && l.action === 'deleted')).toBe(true);
  });

  it('SIGTERM during an upload: the call in flight finishes and is recorded, no other starts, exit 0 within the grace period', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { via: 'proxy', config: { upload: { concurrency: 1, requestsPerSecond: 1000 } } });
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    ws.write('c.md', '# C\n');
    suite.proxy.requests.length = 0;
    let termAtMs = 0;
    // The hooks are in place before the child (started in this same tick) can send anything.
    const k = watch(ws);
    suite.proxy.setHooks({
      onRequest: async (req) => {
        if (!isUpload(req) || termAtMs > 0) return { kind: 'forward' };
        termAtMs = Date.now();
        k.child.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 800));
        return { kind: 'forward' };
      },
    });
    const exit = await k.exited;
    const tookMs = Date.now() - termAtMs;
    suite.proxy.setHooks({});

    expect(exit.code).toBe(0);
    expect(tookMs).toBeLessThan(10_000);
    expect(suite.proxy.requests.filter(isUpload)).toHaveLength(1);
    expect(await copies(ds)).toEqual({ 'a.md': 1 });
    expect(100_000 - (await ds.balance())).toBe(5);
    const state = openState(ws.statePath);
    try {
      expect(state.getTracked('docs', 'a.md')?.remoteId).not.toBeNull();
      expect(state.ledgerTotals().all.spent).toBe(5);
      expect(state.lastRun('sync')?.status).toBe('stopped');
      expect(state.inFlightOps()).toHaveLength(0);
    } finally {
      state.close();
    }
    expect(statusFile(ws)?.stoppedAt).not.toBeNull();
    // The rest is sent by the next start.
    const again = await ws.runJson('sync');
    expect(again.report.summary).toMatchObject({ uploaded: 2, creditsSpent: 10 });
  });

  it('SIGTERM with a call that outlives the grace period: exit 0 at the grace, the call left recorded in flight, settled by the next start without a second charge', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, {
      via: 'proxy',
      config: { upload: { concurrency: 1, requestsPerSecond: 1000 }, watch: { debounceMs: 300, shutdownGraceSeconds: 1 } },
    });
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    suite.proxy.requests.length = 0;
    let termAtMs = 0;
    let forwardedAtMs = 0;
    const k = watch(ws);
    suite.proxy.setHooks({
      onRequest: async (req) => {
        if (!isUpload(req) || termAtMs > 0) return { kind: 'forward' };
        termAtMs = Date.now();
        k.child.kill('SIGTERM');
        // Held well past the 1 s grace: the daemon must not wait for it.
        await new Promise((r) => setTimeout(r, 4000));
        forwardedAtMs = Date.now();
        return { kind: 'forward' };
      },
    });
    const exit = await k.exited;
    const exitedAtMs = Date.now();

    expect(exit.code).toBe(0);
    expect(forwardedAtMs).toBe(0); // it exited while the call was still held
    expect(exitedAtMs - termAtMs).toBeGreaterThanOrEqual(1000);
    const warned = logsOf(k).find((l) => l.msg.startsWith('calls still in flight after the grace period'));
    expect(warned).toMatchObject({ level: 40, graceSeconds: 1 });
    expect(logsOf(k).some((l) => l.msg === 'stopped')).toBe(false);
    expect(statusFile(ws)?.stoppedAt).not.toBeNull();
    // As the process left it: the call recorded before it was sent and still in flight, its run still running.
    const raw = new Database(ws.statePath, { readonly: true });
    try {
      // b.md waited for a.md (concurrency 1): recorded, never sent.
      expect(raw.prepare('SELECT kind, path, state FROM outbox ORDER BY id').all()).toEqual([
        { kind: 'upload', path: 'a.md', state: 'in_flight' },
        { kind: 'upload', path: 'b.md', state: 'pending' },
      ]);
      expect(raw.prepare("SELECT status FROM runs WHERE command = 'sync' ORDER BY id DESC LIMIT 1").get()).toEqual({ status: 'running' });
    } finally {
      raw.close();
    }
    // The next opener with the lock turns it unknown (to be settled from the remote listing before anything is sent again).
    const state = openState(ws.statePath);
    try {
      expect(state.recoveredInFlight).toBe(1);
      expect(state.unknownOps().map((op) => op.path)).toEqual(['a.md']);
      expect(state.lastRun('sync')?.status).toBe('interrupted');
      expect(state.getTracked('docs', 'a.md')?.remoteId ?? null).toBeNull();
    } finally {
      state.close();
    }

    // The held call goes through after all (the service charges it); the next start finds it in the listing.
    await until('the held upload forwarded and charged', async () => forwardedAtMs > 0 && (await copies(ds))['a.md'] === 1);
    suite.proxy.setHooks({});
    const again = await ws.runJson('sync');
    expect(again.report.summary).toMatchObject({ uploaded: 1, creditsSpent: 5 });
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1 });
    expect(100_000 - (await ds.balance())).toBe(10);
  });

  it('kill -9 after the service charged an upload: the restarted daemon pays nothing again', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { via: 'proxy', config: { upload: { concurrency: 1, requestsPerSecond: 1000 } } });
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    let killed = false;
    const k = watch(ws);
    suite.proxy.setHooks({
      onResponse: async (req) => {
        if (!isUpload(req) || killed) return 'relay';
        killed = true;
        await killHard(k);
        return 'drop';
      },
    });
    const exit = await k.exited;
    const chargedBeforeRestart = 100_000 - (await ds.balance());
    suite.proxy.setHooks({});
    const again = watch(ws);
    await ready(ws, again);
    await stop(again);

    expect(exit.signal).toBe('SIGKILL');
    expect(chargedBeforeRestart).toBe(5);
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1 });
    expect(100_000 - (await ds.balance())).toBe(10);
  });

  it('out of inotify watches (ENOSPC, provoked in a user namespace with a limit of 8): the folders past it polled, the others by events, status says so', async () => {
    // The limit is lowered only inside a new user namespace (/proc/sys/user/max_inotify_watches is per
    // namespace there), never the machine's fs.inotify.max_user_watches; `exec` keeps kbsync's pid.
    const limit = 'echo 8 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"';
    const prefix = ['unshare', '--user', '--map-root-user', 'sh', '-c', limit];
    const probe = spawnSync(prefix[0] as string, [...prefix.slice(1), 'true'], { encoding: 'utf8' });
    expect(probe.status, `this test needs user namespaces (unshare --user): ${probe.stderr}`).toBe(0);
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { config: { watch: { debounceMs: 100, backend: 'events', pollIntervalMs: 100 } } });
    for (let d = 0; d < 12; d++) ws.write(`part-${d}/doc.md`, `# ${d}\n`);
    const k = spawnKbsync(['watch', '-c', ws.configPath, '--http', '127.0.0.1:0'], ws.root, {}, prefix);
    children.push(k);
    await ready(ws, k);
    // Which folders hold an inotify watch of the daemon (root + 7 parts at most), from its /proc fdinfo.
    const watched = inotifyInodesOf(k.child.pid as number);
    const parts = Array.from({ length: 12 }, (_, d) => `part-${d}`);
    const byEvents = parts.filter((p) => watched.has(statSync(join(ws.docs, p)).ino));
    const polled = parts.filter((p) => !byEvents.includes(p));
    expect(watched.size).toBeLessThanOrEqual(8);
    expect(watched.has(statSync(ws.docs).ino)).toBe(true);
    expect(polled.length).toBeGreaterThanOrEqual(5);
    const inPolled = `${polled[0] as string}/late.md`;
    const inWatched = `${byEvents[0] as string}/late.md`;
    ws.write(inPolled, '# late, polled\n');
    ws.write(inWatched, '# late, watched\n');
    await until('both uploaded', () => uploadsOf(k, inPolled).length === 1 && uploadsOf(k, inWatched).length === 1);
    const saved = statusFile(ws)?.watches[0];
    const status = await ws.run('status');
    const metrics = await (await request(`http://${statusFile(ws)?.http}/metrics`)).body.text();
    const exit = await stop(k);

    expect(exit.code).toBe(0);
    expect(metrics).toMatch(new RegExp(`^kbsync_watch_polled_folders\\{source="docs"\\} ${polled.length}$`, 'm'));
    expect(saved).toMatchObject({ backend: 'events', folders: { polled: polled.length, watched: 13 - polled.length } });
    expect(status.stdout).toContain(`docs (events: ${polled.length} of 13 folders polled`);
    expect(status.stdout).toContain('fs.inotify.max_user_watches is 8');
    const advice = logsOf(k).filter((l) => l.msg.includes('fs.inotify.max_user_watches'));
    expect(advice[0]).toMatchObject({ level: 50, source: 'docs', polled: polled.length });
    expect(Object.values(await copies(ds))).toEqual(new Array(14).fill(1));
  });

  it('a second daemon on the same state is refused (exit 2, naming the lock) and the first goes on', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    const first = watch(ws);
    await ready(ws, first);
    const second = await watch(ws).exited;
    ws.write('after.md', '# after\n');
    await until('after.md uploaded by the first', () => uploadsOf(first, 'after.md').length === 1);
    await stop(first);

    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`\`kbsync watch\` (pid ${first.child.pid} on `);
    // The two ways on and the commands that work beside it are said once, not again by the hint line.
    expect(second.stderr.match(/share one PostgreSQL state/g)).toHaveLength(1);
    expect(second.stderr.match(/work beside it/g)).toHaveLength(1);
  });

  it("--http: /healthz, /readyz after the first sync, /metrics with the run's values; kbsync status shows the running daemon", async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    const k = watch(ws, '--http', '127.0.0.1:0');
    await ready(ws, k);
    const base = `http://${statusFile(ws)?.http}`;
    const get = async (path: string): Promise<{ status: number; text: string }> => {
      const res = await request(`${base}${path}`);
      return { status: res.statusCode, text: await res.body.text() };
    };
    const healthz = await get('/healthz');
    const readyz = await get('/readyz');
    const metrics = await get('/metrics');
    const status = await ws.run('status');
    const statusJson = await ws.runJson('status');
    await stop(k);

    expect(healthz.status).toBe(200);
    expect(readyz).toEqual({ status: 200, text: '{"status":"ready"}\n' });
    const value = (name: string): number => Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics.text)?.[1]);
    expect(value('kbsync_uploads_total')).toBe(2);
    expect(value('kbsync_files_tracked')).toBe(2);
    expect(value('kbsync_credits_spent{period="day"}')).toBe(10);
    expect(value('kbsync_credits_left{period="day"}')).toBe(100_000 - 10);
    expect(value('kbsync_sync_cycles_total')).toBe(1);
    expect(value('kbsync_ready')).toBe(1);
    expect(value('kbsync_watch_backend{source="docs",backend="events"}')).toBe(1);
    expect(value('kbsync_watch_polled_folders{source="docs"}')).toBe(0);
    expect(value('kbsync_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/daemon: +running \(pid \d+/);
    expect(status.stdout).toMatch(/waiting for: .*changes in docs \(events\)/);
    expect((statusJson.report as unknown as { daemon: { pid: number; lastSync: { uploaded: number } } }).daemon).toMatchObject({
      pid: k.child.pid,
      lastSync: { uploaded: 2 },
    });
  });
});
