import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { signWebhook } from '../../../src/client/webhook-verify.js';
import { openState } from '../../../src/sync/state/index.js';
import type { PgStateStore } from '../../../src/sync/state/pg/index.js';
import { ensureDist } from '../../helpers/build-dist.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, type Workspace, type WorkspaceConfig } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { isUpload } from '../../helpers/fault-proxy.js';
import { killHard, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { freshDatabase } from '../../helpers/postgres.js';
import { startDaemon, useChildren, until, freePort, logsOf, type LogLine, untilDaemonReady } from '../../helpers/daemon-children.js';

/*
 * `kbsync watch` (the built CLI, as a child process) with `state: postgres://...` against the local
 * service: its status file, /readyz and /metrics, webhook deliveries kept in the shared state, two
 * daemons of distinct sources on one state and one budget, two of the same source name, kill -9.
 */

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });

type StatusFile = { pid: number; ready: boolean; http: string | null; stoppedAt: string | null; counters: Record<string, number> };

const children = useChildren();

function workspace(ds: E2eDataset, url: string, o: { via?: 'proxy'; config?: Partial<WorkspaceConfig> } = {}): Workspace {
  const baseUrl = o.via === 'proxy' ? suite.proxy.url : suite.svc.url;
  return createWorkspace(suite.temp.make(), {
    baseUrl,
    apiKey: ds.apiKey,
    config: { state: url, watch: { debounceMs: 300 }, ...o.config },
  });
}

function watch(ws: Workspace, args: string[] = [], env: Record<string, string> = {}): KbsyncChild {
  return startDaemon(children, ws, args, env);
}

const uploadsOf = (k: KbsyncChild, path?: string): LogLine[] =>
  logsOf(k).filter((l) => l.msg === 'file' && (path === undefined || l.path === path) && l.action === 'upload' && l.outcome === 'done');

/** Where the daemon of a PostgreSQL state keeps its status file: beside its config, under .kbsync/. */
const statusPath = (ws: Workspace): string => join(ws.root, '.kbsync', 'postgres.state.watch.json');
const statusFile = (ws: Workspace): StatusFile | null =>
  existsSync(statusPath(ws)) ? (JSON.parse(readFileSync(statusPath(ws), 'utf8')) as StatusFile) : null;

async function ready(ws: Workspace, k: KbsyncChild): Promise<void> {
  await untilDaemonReady(k, statusPath(ws));
}

async function stop(k: KbsyncChild): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  k.child.kill('SIGTERM');
  return k.exited;
}

async function copies(ds: E2eDataset): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of await ds.files()) out[f.name] = (out[f.name] ?? 0) + 1;
  return out;
}

/** A read-only view of the shared state for the test's checks. */
function withView<T>(url: string, fn: (view: PgStateStore) => T): T {
  const view = openState(url, { lock: false }) as PgStateStore;
  try {
    return fn(view);
  } finally {
    view.close();
  }
}

describe('kbsync watch with a PostgreSQL state', () => {
  it('first sync, one upload per change, /readyz and /metrics, a status file beside the config, SIGTERM exits 0 and records', async () => {
    const url = await freshDatabase('watch');
    const ds = suite.svc.dataset();
    const start = await ds.balance();
    const ws = workspace(ds, url);
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    const port = await freePort();
    const k = watch(ws, ['--http', `127.0.0.1:${port}`]);
    await ready(ws, k);
    ws.write('c.md', '# C\n');
    await until('c.md uploaded', () => uploadsOf(k, 'c.md').length === 1);
    const readyz = await request(`http://127.0.0.1:${port}/readyz`);
    await readyz.body.text();
    const metrics = await (await request(`http://127.0.0.1:${port}/metrics`)).body.text();
    const during = statusFile(ws);
    // `kbsync status` beside it finds the running daemon through that file, and reads the shared state.
    const live = await ws.run('status', '--json');
    const exit = await stop(k);

    expect(exit.code).toBe(0);
    expect(readyz.statusCode).toBe(200);
    expect(metrics).toMatch(/^kbsync_ready 1$/m);
    expect(metrics).toMatch(/^kbsync_files_tracked 3$/m);
    expect(metrics).toMatch(/^kbsync_uploads_total 3$/m);
    expect(during).toMatchObject({ pid: k.child.pid, ready: true, http: `127.0.0.1:${port}`, stoppedAt: null });
    expect(live.code, live.stderr).toBe(0);
    expect((JSON.parse(live.stdout) as { daemon: { pid: number } | null }).daemon).toMatchObject({ pid: k.child.pid });
    expect(statusFile(ws)?.stoppedAt).not.toBeNull();
    expect(logsOf(k).some((l) => l.msg === 'could not write the daemon status file')).toBe(false);
    expect(uploadsOf(k)).toHaveLength(3);
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1, 'c.md': 1 });
    const charged = start - (await ds.balance());
    withView(url, (view) => {
      expect(view.trackedCount()).toBe(3);
      expect(view.verifyTotals()).toEqual([]);
      expect(view.creditsUsed(null).spent.month).toBe(charged);
      expect(view.inFlightOps()).toHaveLength(0);
      expect(view.runners().find((r) => r.pid === k.child.pid)).toMatchObject({ scope: 'docs', alive: false });
    });
    // `kbsync status` finds the daemon it left (stopped) and reads the shared state.
    const st = await ws.run('status', '--json');
    expect(st.code, st.stderr).toBe(0);
    expect((JSON.parse(st.stdout) as { credits: { month: number } }).credits.month).toBe(charged);
  });

  it('webhook deliveries land in the PostgreSQL state; a replay is refused, also across a restart of the daemon', async () => {
    const url = await freshDatabase('watch_hooks');
    const ds = suite.svc.dataset();
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const ws = workspace(ds, url, { config: { watch: { debounceMs: 300, webhookSecret: '${KBSYNC_WEBHOOK_SECRET}' } } });
    ws.write('a.md', '# A\n');
    const port = await freePort();
    const post = async (id: string, body: string): Promise<number> => {
      const ts = Math.floor(Date.now() / 1000);
      const res = await request(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(ts),
          'webhook-signature': signWebhook(secret, id, ts, body),
        },
        body,
      });
      await res.body.text();
      return res.statusCode;
    };
    const body = JSON.stringify({
      type: 'dataset.mode_changed',
      data: { agent_id: 1, dataset_id: 1, mode: 'self_learning', previous_mode: 'read_only' },
    });
    let k = watch(ws, ['--http', `127.0.0.1:${port}`], { KBSYNC_WEBHOOK_SECRET: secret });
    await ready(ws, k);
    const first = [await post('evt_1', body), await post('evt_1', body)];
    expect((await stop(k)).code).toBe(0);
    k = watch(ws, ['--http', `127.0.0.1:${port}`], { KBSYNC_WEBHOOK_SECRET: secret });
    await ready(ws, k);
    const second = [await post('evt_1', body), await post('evt_2', body)];
    expect((await stop(k)).code).toBe(0);

    expect(first).toEqual([200, 409]);
    expect(second).toEqual([409, 200]);
    const events = withView(url, (view) => view.webhookEvents());
    expect(events.map((e) => e.id).sort()).toEqual(['evt_1', 'evt_2']);
    expect(events[0]?.data).toMatchObject({ mode: 'self_learning' });
  });

  it('two daemons of distinct sources on one state: both sync their own folder into one dataset, under one shared cap', async () => {
    const url = await freshDatabase('watch_two');
    const ds = suite.svc.dataset();
    const start = await ds.balance();
    const CAP = 60;
    const budget = { maxCreditsPerRun: 10_000, maxCreditsPerDay: 10_000, maxCreditsPerMonth: CAP };
    const wa = workspace(ds, url, { config: { sources: [{ name: 'alpha', path: './docs' }], budget } });
    const wb = workspace(ds, url, { config: { sources: [{ name: 'beta', path: './docs' }], budget } });
    wa.write('alpha-1.md', '# alpha 1\n');
    wb.write('beta-1.md', '# beta 1\n');
    const ka = watch(wa);
    const kb = watch(wb);
    await ready(wa, ka);
    await ready(wb, kb);
    // Both at once, each in its own folder; then more than the cap allows for the two together.
    wa.write('alpha-2.md', '# alpha 2\n');
    wb.write('beta-2.md', '# beta 2\n');
    await until(
      'alpha-2.md and beta-2.md uploaded',
      () => uploadsOf(ka, 'alpha-2.md').length === 1 && uploadsOf(kb, 'beta-2.md').length === 1,
    );
    for (let i = 3; i <= 12; i++) {
      wa.write(`alpha-${i}.md`, `# alpha ${i}\n`);
      wb.write(`beta-${i}.md`, `# beta ${i}\n`);
    }
    await until(
      'both daemons stopped by the shared cap',
      () => [ka, kb].every((k) => logsOf(k).some((l) => l.msg === 'sync cycle done' && Number(l.deferred) > 0)),
      30_000,
    );
    const [ea, eb] = [await stop(ka), await stop(kb)];

    expect([ea.code, eb.code]).toEqual([0, 0]);
    const charged = start - (await ds.balance());
    expect(charged).toBeLessThanOrEqual(CAP);
    expect(charged).toBeGreaterThan(CAP - 10);
    const names = Object.keys(await copies(ds));
    expect(Object.values(await copies(ds)).every((n) => n === 1)).toBe(true);
    // Each daemon uploaded only its own folder's files, and both uploaded some.
    expect(uploadsOf(ka).every((l) => l.source === 'alpha' && String(l.path).startsWith('alpha-'))).toBe(true);
    expect(uploadsOf(kb).every((l) => l.source === 'beta' && String(l.path).startsWith('beta-'))).toBe(true);
    expect(uploadsOf(ka).length).toBeGreaterThanOrEqual(2);
    expect(uploadsOf(kb).length).toBeGreaterThanOrEqual(2);
    expect(names.length).toBe(uploadsOf(ka).length + uploadsOf(kb).length);
    withView(url, (view) => {
      expect(view.creditsUsed(null).spent.month).toBe(charged);
      expect(view.verifyTotals()).toEqual([]);
      expect(
        view
          .runners()
          .map((r) => r.scope)
          .sort(),
      ).toEqual(['alpha', 'beta']);
    });
  });

  it('a second daemon of the same source name on the same state is refused, naming the source and the runner that holds it', async () => {
    const url = await freshDatabase('watch_same');
    const ds = suite.svc.dataset();
    const w1 = workspace(ds, url);
    const w2 = workspace(ds, url);
    w1.write('one.md', '# one\n');
    w2.write('two.md', '# two\n');
    const k1 = watch(w1);
    await ready(w1, k1);
    const k2 = watch(w2);
    const refused = await k2.exited;
    // `kbsync status` of the other folder (no daemon of its own there) reads the shared state beside the runner.
    const st = await w2.run('status');
    const running = k1.child.exitCode === null;
    expect((await stop(k1)).code).toBe(0);

    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `the source "docs" is being synced by runner #\\d+ \\(host \\S+, pid ${k1.child.pid}, sources docs, started [^)]+\\) on this PostgreSQL state`,
      ),
    );
    expect(refused.stderr).toContain('distinct names');
    expect(running).toBe(true);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/runners:\s+1 runner wrote to this shared state/);
    // The refused one sent nothing and did not touch the first one's files: one.md stays, two.md never went.
    expect(await copies(ds)).toEqual({ 'one.md': 1 });
    withView(url, (view) => expect(view.runners().map((r) => r.pid)).toEqual([k1.child.pid]));
    // Once the first has stopped, the same source may be synced from elsewhere.
    const k3 = watch(w2);
    await ready(w2, k3);
    expect((await stop(k3)).code).toBe(0);
  });

  it('kill -9 after the service charged an upload: the restarted daemon pays nothing again', async () => {
    const url = await freshDatabase('watch_kill');
    const ds = suite.svc.dataset();
    const start = await ds.balance();
    const ws = workspace(ds, url, { via: 'proxy', config: { upload: { concurrency: 1, requestsPerSecond: 1000 } } });
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
    const chargedBeforeRestart = start - (await ds.balance());
    suite.proxy.setHooks({});
    const again = watch(ws);
    await ready(ws, again);
    expect((await stop(again)).code).toBe(0);

    expect(exit.signal).toBe('SIGKILL');
    expect(chargedBeforeRestart).toBe(5);
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1 });
    const charged = start - (await ds.balance());
    withView(url, (view) => {
      expect(view.creditsUsed(null).spent.month).toBe(charged);
      expect(view.unknownOps()).toHaveLength(0);
      expect(view.inFlightOps()).toHaveLength(0);
      expect(view.verifyTotals()).toEqual([]);
    });
    expect(uploadsOf(again, 'a.md')).toHaveLength(0);
  });
  it('the connection to PostgreSQL lost (the server ended the session): the daemon stops, exit 2, naming the state; a restart goes on', async () => {
    const url = await freshDatabase('watch_lost');
    const ds = suite.svc.dataset();
    const ws = workspace(ds, url);
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);
    // Its session is gone (a server restart, a failover, an admin): so are its source locks, which another runner may take now.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const ended = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'kbsync'",
      );
      expect(ended.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    ws.write('b.md', '# B\n');
    const exit = await k.exited;

    expect(exit.code).toBe(2);
    expect(exit.stderr).toMatch(/connection to the PostgreSQL state postgres:\/\/\S+ was lost/);
    expect(statusFile(ws)?.stoppedAt).not.toBeNull();
    const again = watch(ws);
    await ready(ws, again);
    expect((await stop(again)).code).toBe(0);
    expect(await copies(ds)).toEqual({ 'a.md': 1, 'b.md': 1 });
  });
});
