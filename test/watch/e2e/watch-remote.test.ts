import { existsSync, readFileSync } from 'node:fs';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, type Workspace, type WorkspaceConfig } from '../../helpers/e2e-workspace.js';
import type { ProxiedRequest } from '../../helpers/fault-proxy.js';
import type { KbsyncChild } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { startDaemon, useChildren, until, logsOf, type LogLine, untilDaemonReady } from '../../helpers/daemon-children.js';

// The daemon talks to the service through the proxy: its listings and reprocesses are counted there.
const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();

type StatusFile = { pid: number; ready: boolean; http: string | null };

function workspace(ds: E2eDataset, config: Partial<WorkspaceConfig> = {}): Workspace {
  return createWorkspace(suite.temp.make(), {
    baseUrl: suite.proxy.url,
    apiKey: ds.apiKey,
    config: { watch: { debounceMs: 300, rescanMinutes: 60 }, ...config },
  });
}

function watch(ws: Workspace): KbsyncChild {
  return startDaemon(children, ws, ['--http', '127.0.0.1:0']);
}

function statusFile(ws: Workspace): StatusFile | null {
  const path = `${ws.statePath}.watch.json`;
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as StatusFile) : null;
}

async function ready(ws: Workspace, k: KbsyncChild): Promise<void> {
  await untilDaemonReady(k, `${ws.statePath}.watch.json`);
}

/** One value of the daemon's /metrics. */
async function metric(ws: Workspace, name: string): Promise<number> {
  const text = await (await request(`http://${statusFile(ws)?.http}/metrics`)).body.text();
  return Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
}

const ofKey = (ds: E2eDataset) => (r: ProxiedRequest) => r.headers['x-api-key'] === ds.apiKey;
const isListing = (r: ProxiedRequest): boolean => r.method === 'GET' && /\/files\/?(\?|$)/.test(r.url);
const isReprocess = (r: ProxiedRequest): boolean => r.method === 'POST' && /\/files\/\d+\/reprocess/.test(r.url);
const listingsOf = (ds: E2eDataset): ProxiedRequest[] => suite.proxy.requests.filter((r) => ofKey(ds)(r) && isListing(r));
const reprocessesOf = (ds: E2eDataset): ProxiedRequest[] => suite.proxy.requests.filter((r) => ofKey(ds)(r) && isReprocess(r));
const fileLines = (k: KbsyncChild, path: string): LogLine[] => logsOf(k).filter((l) => l.msg === 'file' && l.path === path);
const cyclesOf = (k: KbsyncChild): LogLine[] => logsOf(k).filter((l) => l.msg === 'sync cycle done');

/** Rewrites the listing the daemon reads: each file `rewrite` returns a patch for is patched. */
function rewriteListings(ds: E2eDataset, rewrite: (f: { name: string; status: string; error?: string | null }) => object | null): void {
  suite.proxy.setHooks({
    onResponse: (req, res) => {
      if (!ofKey(ds)(req) || !isListing(req) || res.status !== 200) return 'relay';
      const listing = JSON.parse(res.body.toString()) as { files: { name: string; status: string; error?: string | null }[] };
      for (const f of listing.files) Object.assign(f, rewrite(f) ?? {});
      res.body = Buffer.from(JSON.stringify(listing));
      return 'relay';
    },
  });
}

describe('kbsync watch learns remote outcomes between rescans', () => {
  it('after a scoped upload, status goes from processing to processed with no further event; the listings back off (2 s, 4 s, 8 s) and stop', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);
    // The service says b.md is still processing, for two listings.
    let held = 0;
    rewriteListings(ds, (f) => (f.name === 'b.md' && held < 2 ? (held++, { status: 'processing' }) : null));
    ws.write('b.md', '# B\n');
    await until('b.md uploaded', () => fileLines(k, 'b.md').some((l) => l.outcome === 'done'));
    const sentAt = performance.now();
    await until('the status saying b.md is still processing', async () =>
      /remote processing: +1 copy queued or processing; the daemon lists them again at \d{4}-/.test((await ws.run('status')).stdout),
    );
    await until(
      'b.md processed in the status',
      async () => itemOf((await ws.runJson('status')).report, 'b.md').remoteStatus === 'processed',
      30_000,
    );
    const listings = listingsOf(ds).filter((r) => r.receivedAtMs > sentAt);
    await new Promise((r) => setTimeout(r, 3000));
    const after = listingsOf(ds).filter((r) => r.receivedAtMs > sentAt).length;
    const settledStatus = await ws.run('status');
    suite.proxy.setHooks({});

    expect(listings).toHaveLength(3);
    const gaps = listings.map((r, i) => r.receivedAtMs - (i === 0 ? sentAt : (listings[i - 1] as ProxiedRequest).receivedAtMs));
    expect(gaps[0]).toBeGreaterThan(1500);
    expect(gaps[1]).toBeGreaterThan(1.5 * (gaps[0] as number));
    expect(gaps[2]).toBeGreaterThan(1.5 * (gaps[1] as number));
    // Settled: no listing after the one that saw it processed; and no cycle but the first and b.md's.
    expect(after).toBe(3);
    expect(settledStatus.stdout).not.toMatch(/remote processing/);
    expect(cyclesOf(k)).toHaveLength(2);
    expect(logsOf(k).some((l) => l.msg === 'remote processing done' && l.path === 'b.md')).toBe(true);
    // a.md (the first cycle's upload) and b.md.
    expect(await metric(ws, 'kbsync_files_processed_total')).toBe(2);
  });

  it('a failure is counted when the listing shows it; a retryable one is reprocessed once (maxReprocessAttempts 1), a parse_failed one never', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 1 } });
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);
    // retry.json fails as the service's own fault would (a code worth a retry); broken.json as it is, parse_failed.
    rewriteListings(ds, (f) =>
      f.name === 'retry.json' && typeof f.error === 'string' ? { error: f.error.replace(/^[a-z_]+: /, 'internal: ') } : null,
    );
    ws.write('broken.json', '{"unterminated": [1,\n');
    ws.write('retry.json', '{"also": [2,\n');
    const failed = (path: string): LogLine[] => logsOf(k).filter((l) => l.msg === 'remote processing failed' && l.path === path);
    await until(
      'retry.json failed again after its reprocess',
      () => failed('retry.json').length === 2 && failed('broken.json').length === 1,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 3000));

    expect(await metric(ws, 'kbsync_failures_total')).toBe(3);
    // The files failed now, which a restart (counters from 0) does not lose.
    expect(await metric(ws, 'kbsync_files_failed')).toBe(2);
    expect(reprocessesOf(ds)).toHaveLength(1);
    expect(fileLines(k, 'retry.json').map((l) => [l.action, l.outcome])).toEqual([
      ['upload', 'done'],
      ['reprocess', 'done'],
    ]);
    expect(fileLines(k, 'broken.json').filter((l) => l.action === 'reprocess')).toEqual([]);
    expect(failed('broken.json')[0]?.next).toMatch(/^not reprocessed: the service says the same file would fail again/);
    expect(failed('retry.json').map((l) => l.next)).toEqual([
      'reprocessed now (1 of 1)',
      'not reprocessed: already reprocessed 1 of 1 times',
    ]);
    const status = (await ws.runJson('status')).report;
    expect(itemOf(status, 'broken.json').remoteStatus).toBe('failed');
    expect(itemOf(status, 'retry.json').remoteStatus).toBe('failed');
    suite.proxy.setHooks({});
  });
});

describe('kbsync watch goes on with work the budget deferred', () => {
  it('deferred by maxCreditsPerRun: the next cycles send the rest with no further event', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { budget: { maxCreditsPerRun: 20, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 } });
    for (let i = 0; i < 10; i++) ws.write(`f${i}.md`, `# F${i}\n`);
    const k = watch(ws);
    await until('all ten uploaded', async () => (await ds.files()).length === 10, 30_000);
    await until('the third cycle recorded', () => cyclesOf(k).length === 3);
    await new Promise((r) => setTimeout(r, 2000));
    const status = await ws.run('status');

    expect(cyclesOf(k).map((l) => [l.reasons, l.uploaded, l.deferred])).toEqual([
      [['start'], 4, 6],
      [['deferred'], 4, 2],
      [['deferred'], 2, 0],
    ]);
    expect(status.stdout).toMatch(/pending work: +none/);
  });

  it('a file above maxCreditsPerRun alone never loops; status says why it waits', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { budget: { maxCreditsPerRun: 4, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 } });
    ws.write('a.md', '# A\n');
    const k = watch(ws);
    await ready(ws, k);
    await new Promise((r) => setTimeout(r, 2500));
    const status = await ws.run('status');

    expect(cyclesOf(k)).toHaveLength(1);
    expect(logsOf(k).some((l) => l.msg.startsWith('files that cost more than budget.maxCreditsPerRun'))).toBe(true);
    expect(status.stdout).toMatch(
      /pending work: +1 file deferred by the budget \(1 by budget.maxCreditsPerRun: each costs more than the cap/,
    );
  });

  it('deferred by maxCreditsPerDay: waits for the day; status counts it and says so', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { budget: { maxCreditsPerRun: 100_000, maxCreditsPerDay: 20, maxCreditsPerMonth: 100_000 } });
    for (let i = 0; i < 6; i++) ws.write(`f${i}.md`, `# F${i}\n`);
    const k = watch(ws);
    await ready(ws, k);
    await new Promise((r) => setTimeout(r, 2500));
    const status = await ws.run('status');

    expect(cyclesOf(k)).toHaveLength(1);
    expect(await ds.files()).toHaveLength(4);
    expect(status.stdout).toMatch(
      /pending work: +2 files deferred by the budget \(2 by budget.maxCreditsPerDay: the day to open at \d{4}-\d\d-\d\dT00:00:00.000Z\)/,
    );
  });
});

describe('kbsync watch during a long, rate-limited cycle', () => {
  it('logs the pace with an ETA, each file as its call settles, moves the counters and learns remote outcomes mid-cycle; /metrics has the process metrics', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { upload: { concurrency: 2, requestsPerSecond: 2 } });
    for (let i = 0; i < 24; i++) ws.write(`f${String(i).padStart(2, '0')}.md`, `# F${i}\n`);
    const k = watch(ws);
    await until('the http server up', () => statusFile(ws)?.http != null);
    await until('a few uploads done', () => logsOf(k).filter((l) => l.msg === 'file' && l.outcome === 'done').length >= 4);
    const uploadsMid = await metric(ws, 'kbsync_uploads_total');
    const spentMid = await metric(ws, 'kbsync_credits_spent_total');
    const dayMid = await metric(ws, 'kbsync_credits_spent{period="day"}');
    const cyclesMid = cyclesOf(k).length;
    // The listing is read during the cycle too, for the copies it sent: status shows them processed.
    await until('a copy processed in the status while the cycle runs', async () =>
      (await ws.runJson('status')).report.items.some((i) => i.remoteStatus === 'processed'),
    );
    const cyclesAtProcessed = cyclesOf(k).length;
    await ready(ws, k);
    // The status file can say ready before the cycle's log line has crossed the pipe.
    await until('the cycle logged', () => cyclesOf(k).length === 1);
    const logs = logsOf(k);
    const files = logs.filter((l) => l.msg === 'file');
    const done = cyclesOf(k)[0] as LogLine;
    const pace = logs.find((l) => /^24 uploads at 2\/s: about 12 s$/.test(l.msg));

    expect(cyclesMid).toBe(0);
    expect(cyclesAtProcessed).toBe(0);
    // The rest after the cycle, each counted once.
    await until('every copy processed', () => logsOf(k).filter((l) => l.msg === 'remote processing done').length >= 24, 15_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(logsOf(k).filter((l) => l.msg === 'remote processing done')).toHaveLength(24);
    expect(await metric(ws, 'kbsync_files_processed_total')).toBe(24);
    expect(uploadsMid).toBeGreaterThanOrEqual(4);
    expect(uploadsMid).toBeLessThan(24);
    expect(spentMid).toBeGreaterThanOrEqual(uploadsMid * 5);
    expect(spentMid).toBeLessThan(120);
    expect(dayMid).toBeGreaterThanOrEqual(spentMid);
    expect(dayMid).toBeLessThan(120);
    expect(pace).toMatchObject({ calls: 24, requestsPerSecond: 2, etaSeconds: 12 });
    expect(files).toHaveLength(24);
    // The lines come as the calls settle, spread through the cycle, not all at its end.
    expect((done.time as number) - ((files[0] as LogLine).time as number)).toBeGreaterThan(5000);
    expect(await metric(ws, 'kbsync_uploads_total')).toBe(24);
    expect(await metric(ws, 'kbsync_credits_spent_total')).toBe(120);
    expect(await metric(ws, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(await metric(ws, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });
});
