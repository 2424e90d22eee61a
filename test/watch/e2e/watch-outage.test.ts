import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../../src/service/server.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { datasetApi, type E2eDataset } from '../../helpers/e2e-service.js';
import { createTempDirs, createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { startFaultProxy, isUpload, type FaultProxy } from '../../helpers/fault-proxy.js';
import type { KbsyncChild } from '../../helpers/kbsync-child.js';
import { startDaemon, freePort, logsOf, untilDaemonReady, until, useChildren } from '../../helpers/daemon-children.js';

// The target goes away and comes back on the same port with the same data: a `kbsync serve` restarted.
const temp = createTempDirs();
const children = useChildren();
let dataDir: string;
let port: number;
let service: RunningService | null = null;
let proxy: FaultProxy;

const startTarget = async (): Promise<void> => {
  service = await startService({ dataDir, host: '127.0.0.1', port });
};
const stopTarget = async (): Promise<void> => {
  await service?.close();
  service = null;
};

beforeAll(async () => {
  await ensureDist();
  dataDir = mkdtempSync(join(tmpdir(), 'kbsync-outage-service-'));
  port = await freePort();
  await startTarget();
  proxy = await startFaultProxy(`http://127.0.0.1:${port}`);
}, 180_000);
afterAll(async () => {
  await proxy.close();
  await stopTarget();
  rmSync(dataDir, { recursive: true, force: true });
  temp.cleanup();
});

type TargetStatus = { reachable: boolean; unreachableSince: string | null; lastError: string | null; changesWaiting: number };
type StatusFile = {
  pid: number;
  ready: boolean;
  http: string | null;
  target?: TargetStatus;
  balance?: { credits: number; at: string } | null;
};

function dataset(): E2eDataset {
  if (service === null) throw new Error('the target is down');
  const { datasetId, apiKey } = service.admin.createDataset({ name: 'outage', plan: 'basic', credits: 100_000 });
  return datasetApi(`http://127.0.0.1:${port}`, datasetId, apiKey);
}

function workspace(ds: E2eDataset, baseUrl: string): Workspace {
  return createWorkspace(temp.make(), {
    baseUrl,
    apiKey: ds.apiKey,
    config: { watch: { debounceMs: 200, rescanMinutes: 60 } },
  });
}

function watch(ws: Workspace): KbsyncChild {
  return startDaemon(children, ws, ['--http', '127.0.0.1:0']);
}

function statusFile(ws: Workspace): StatusFile | null {
  const path = `${ws.statePath}.watch.json`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StatusFile) : null;
}

async function metrics(ws: Workspace): Promise<string> {
  return (await request(`http://${statusFile(ws)?.http}/metrics`)).body.text();
}
const metric = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

/** The dataset's files by name, with their sha256. */
async function remoteShas(ds: E2eDataset): Promise<Map<string, string | null>> {
  return new Map((await ds.files()).map((f) => [f.name, f.sha256]));
}

/** A daemon on a new dataset, through the fault proxy, ready after syncing a.md (the target started if a test left it down). */
async function readyBehindProxy(): Promise<{ ds: E2eDataset; ws: Workspace; k: KbsyncChild }> {
  if (service === null) await startTarget();
  const ds = dataset();
  const ws = workspace(ds, proxy.url);
  ws.write('a.md', '# A\n');
  const k = watch(ws);
  await untilDaemonReady(k, `${ws.statePath}.watch.json`);
  return { ds, ws, k };
}

describe('kbsync watch through an outage of its target', () => {
  it('the target stopped for a while: edits wait as pending, status says so, and they are sent by themselves when it is back', async () => {
    const ds = dataset();
    const ws = workspace(ds, `http://127.0.0.1:${port}`);
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await untilDaemonReady(k, `${ws.statePath}.watch.json`);

    const successBefore = metric(await metrics(ws), 'kbsync_last_success_timestamp_seconds');
    await stopTarget();
    for (let i = 0; i < 6; i++) ws.write(`new-${i}.md`, `# New ${i}\n`);
    ws.write('a.md', '# A, edited while the target is away\n');
    await until('the daemon to say the target is unreachable', () => statusFile(ws)?.target?.reachable === false, 30_000);
    // Edits made once the daemon knows: held, and counted with the others.
    ws.write('new-6.md', '# New 6\n');
    ws.write('new-7.md', '# New 7\n');
    // Give the back-off a few rounds against a refused port.
    await new Promise((r) => setTimeout(r, 6000));

    const down = statusFile(ws)?.target as TargetStatus;
    expect(down.unreachableSince).toMatch(/^\d{4}-/);
    expect(down.lastError).toMatch(/ECONNREFUSED|refused/i);
    expect(down.changesWaiting).toBe(9);
    const text = await ws.run('status');
    expect(text.stdout).toMatch(/target: +unreachable since \d{4}-/);
    expect(text.stdout).toMatch(/9 changes wait for it/);
    expect(text.stdout).not.toMatch(/pending work: +none/);
    expect(text.stdout).toMatch(/daemon: +running \(.*\), waiting for the target to answer/);
    expect(text.stdout).toMatch(/waiting for: +the target to answer \(tried again at \d{4}-/);
    const json = JSON.parse((await ws.run('status', '--json')).stdout) as { daemon?: { target?: TargetStatus } };
    expect(json.daemon?.target?.reachable).toBe(false);
    const m = await metrics(ws);
    expect(metric(m, 'kbsync_target_reachable')).toBe(0);
    expect(metric(m, 'kbsync_changes_waiting')).toBe(9);
    // A cycle the target stopped is not a success.
    expect(metric(m, 'kbsync_last_success_timestamp_seconds')).toBe(successBefore);
    expect(metric(m, 'kbsync_retries_total')).toBeGreaterThan(0);
    const ready = await request(`http://${statusFile(ws)?.http}/readyz`);
    expect(ready.statusCode).toBe(503);
    expect(await ready.body.text()).toMatch(/unreachable/);
    // Not one upload got a file line saying it failed: they wait.
    const fileLines = logsOf(k).filter((l) => l.msg === 'file' && l.outcome === 'failed');
    expect(fileLines).toEqual([]);
    // The probes back off: fewer than one a second.
    const probes = logsOf(k).filter((l) => l.msg === 'the target is still unreachable');
    expect(probes.length).toBeLessThan(6);
    expect(probes.every((l) => typeof l.err === 'string' && /refused/i.test(l.err))).toBe(true);

    // Back: nothing is touched, and everything lands within one back-off step (at most 60 s).
    const backAt = Date.now();
    await startTarget();
    await until(
      'every edit made during the outage in the dataset',
      async () => {
        const shas = await remoteShas(ds);
        return Array.from({ length: 8 }, (_, i) => `new-${i}.md`).every((n) => shas.has(n)) && (await ds.files()).length >= 10;
      },
      90_000,
    );
    expect(Date.now() - backAt).toBeLessThan(75_000);
    await until('the status saying the target is reachable again', () => statusFile(ws)?.target?.reachable === true, 10_000);
    expect(statusFile(ws)?.target?.changesWaiting).toBe(0);
    expect(logsOf(k).some((l) => l.msg === 'the target answers again: sending what waited')).toBe(true);
    // The probe that found the target again is GET /datasets/: the balance it answered is the daemon's.
    expect(statusFile(ws)?.balance).toEqual({ credits: expect.any(Number), at: expect.stringMatching(/^\d{4}-/) });
    const plan = await ws.runJson('plan', '--no-daemon');
    expect(plan.report.summary.uploaded).toBe(0);
    // a.md's first content and its edit, and eight new files: each bought once.
    const uploads = (await ds.files()).length;
    expect(uploads).toBe(10);
    expect(metric(await metrics(ws), 'kbsync_uploads_total')).toBe(10);
    expect(metric(await metrics(ws), 'kbsync_failures_total')).toBe(0);
  }, 240_000);

  it('a storm of 503s to uploads: the daemon stops sending after the first, settles the unknown outcomes and sends the rest once it passes', async () => {
    const { ds, ws } = await readyBehindProxy();

    let storm = true;
    proxy.setHooks({
      onRequest: (req) =>
        storm && req.headers['x-api-key'] === ds.apiKey && isUpload(req)
          ? { kind: 'respond', status: 503, json: { error: { code: 'unavailable', message: 'maintenance' } } }
          : { kind: 'forward' },
    });
    const before = proxy.requests.filter((r) => isUpload(r) && r.headers['x-api-key'] === ds.apiKey).length;
    for (let i = 0; i < 20; i++) ws.write(`s-${i}.md`, `# Storm ${i}\n`);
    await until('the daemon to say the target is unreachable', () => statusFile(ws)?.target?.reachable === false, 30_000);
    await new Promise((r) => setTimeout(r, 4000));
    const during = proxy.requests.filter((r) => isUpload(r) && r.headers['x-api-key'] === ds.apiKey).length - before;
    // Not the whole queue: the daemon stopped after the first failures.
    expect(during).toBeLessThan(8);
    expect(statusFile(ws)?.target?.lastError).toMatch(/503/);

    storm = false;
    await until(
      'the 20 files in the dataset',
      async () => {
        const shas = await remoteShas(ds);
        return Array.from({ length: 20 }, (_, i) => `s-${i}.md`).every((n) => shas.has(n));
      },
      90_000,
    );
    proxy.setHooks({});
    expect((await ds.files()).length).toBe(21);
    await until('reachable again', () => statusFile(ws)?.target?.reachable === true, 10_000);
  }, 240_000);

  it('answers lost after the service stored the uploads: counted once, as uploads and credits, when reconciled; never as failures', async () => {
    const { ds, ws } = await readyBehindProxy();
    const before = await ds.balance();
    let dropping = true;
    proxy.setHooks({
      onResponse: (req) => (dropping && req.headers['x-api-key'] === ds.apiKey && isUpload(req) ? 'drop' : 'relay'),
    });
    for (let i = 0; i < 3; i++) ws.write(`lost-${i}.md`, `# Lost ${i}\n`);
    await until('the daemon to say the target is unreachable', () => statusFile(ws)?.target?.reachable === false, 30_000);
    dropping = false;
    await until(
      'reachable again, nothing waiting',
      () => statusFile(ws)?.target?.reachable === true && statusFile(ws)?.target?.changesWaiting === 0,
      90_000,
    );
    proxy.setHooks({});
    await until('the three in the dataset', async () => (await ds.files()).length === 4, 30_000);
    const spent = before - (await ds.balance());
    const m = await metrics(ws);
    // Each stored once (the idempotency key), paid once, counted once; a lost answer is not a failure.
    expect((await ds.files()).map((f) => f.name).sort()).toEqual(['a.md', 'lost-0.md', 'lost-1.md', 'lost-2.md']);
    expect(metric(m, 'kbsync_failures_total')).toBe(0);
    expect(metric(m, 'kbsync_uploads_total')).toBe(4);
    expect(spent).toBeGreaterThan(0);
    const status = JSON.parse((await ws.run('status', '--json')).stdout) as { credits: { day: number } };
    expect(status.credits.day).toBe(metric(m, 'kbsync_credits_spent_total'));
  }, 240_000);
});
