import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, type Workspace, type WorkspaceConfig } from '../../helpers/e2e-workspace.js';
import type { ProxiedRequest } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { freePort, logsOf, until, useChildren } from '../../helpers/daemon-children.js';
import { creditsToday, rawRequest, startPageDaemon } from '../../helpers/page-daemon.js';

/*
 * The status page's retry and its Now region, against a real daemon and the project's own service
 * behind the fault proxy (which counts the daemon's reprocess calls and rewrites its listings).
 */
const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();

function workspace(ds: E2eDataset, config: Partial<WorkspaceConfig>): Workspace {
  return createWorkspace(suite.temp.make(), {
    baseUrl: suite.proxy.url,
    apiKey: ds.apiKey,
    config: { watch: { debounceMs: 300, rescanMinutes: 60 }, ...config },
  });
}

const ofKey = (ds: E2eDataset) => (r: ProxiedRequest) => r.headers['x-api-key'] === ds.apiKey;
const isListing = (r: ProxiedRequest): boolean => r.method === 'GET' && /\/files\/?(\?|$)/.test(r.url);
const reprocessesOf = (ds: E2eDataset): ProxiedRequest[] =>
  suite.proxy.requests.filter((r) => ofKey(ds)(r) && r.method === 'POST' && /\/files\/\d+\/reprocess/.test(r.url));

describe('the status page acts on a failed file and shows the cycle running', () => {
  it('offers a retry, with its price, only where one may pass; the retry is a reprocess through the outbox, counted in the state and the kept index', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds, { upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 1 } });
    ws.write('a.md', '# A\n');
    const port = await freePort();
    const k = await startPageDaemon(ws, `127.0.0.1:${port}`);
    children.push(k);
    const host = { host: `127.0.0.1:${port}` };
    // retry.json fails as the service's own fault would (worth a retry); broken.json as it is, parse_failed.
    suite.proxy.setHooks({
      onResponse: (req, res) => {
        if (!ofKey(ds)(req) || !isListing(req) || res.status !== 200) return 'relay';
        const listing = JSON.parse(res.body.toString()) as { files: { name: string; error?: string | null }[] };
        for (const f of listing.files)
          if (f.name === 'retry.json' && typeof f.error === 'string') f.error = f.error.replace(/^[a-z_]+: /, 'internal: ');
        res.body = Buffer.from(JSON.stringify(listing));
        return 'relay';
      },
    });
    ws.write('broken.json', '{"unterminated": [1,\n');
    ws.write('retry.json', '{"also": [2,\n');
    const failed = (path: string) => logsOf(k).filter((l) => l.msg === 'remote processing failed' && l.path === path);
    // The daemon's own reprocess (1 of 1) fails too: it tries no more by itself.
    await until(
      'retry.json failed after its reprocess',
      () => failed('retry.json').length === 2 && failed('broken.json').length === 1,
      30_000,
    );
    expect(reprocessesOf(ds)).toHaveLength(1);

    const page = await rawRequest(port, '/', { headers: host });
    const rowOf = (html: string, path: string): string =>
      new RegExp(`<tr>(?:(?!</tr>).)*docs/${path}(?:(?!</tr>).)*</tr>`).exec(html)?.[0] ?? '';
    expect(rowOf(page.body, 'retry.json')).toContain('Retry (5 credits)');
    expect(rowOf(page.body, 'broken.json')).toContain('a retry would fail the same way');
    expect(rowOf(page.body, 'broken.json')).not.toContain('Retry');

    const csrf = /name="kbsync-csrf" content="([^"]+)"/.exec(page.body)?.[1] as string;
    const retry = (path: string, headers: Record<string, string> = { 'content-type': 'application/json', 'x-kbsync-csrf': csrf }) =>
      rawRequest(port, '/api/retry', { method: 'POST', headers: { ...host, ...headers }, body: JSON.stringify({ source: 'docs', path }) });
    // Without the page's CSRF token nothing is retried; a permanent failure is refused, saying why.
    expect((await retry('retry.json', { 'content-type': 'application/json' })).status).toBe(403);
    const refused = await retry('broken.json');
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toMatchObject({ accepted: false, message: expect.stringMatching(/fail the same way/) });
    expect(reprocessesOf(ds)).toHaveLength(1);

    const before = await creditsToday(port);
    const accepted = await retry('retry.json');
    expect(accepted.status).toBe(202);
    expect(JSON.parse(accepted.body)).toMatchObject({ accepted: true, credits: 5 });
    await until(
      'the retry reprocessed and failed again',
      () => reprocessesOf(ds).length === 2 && failed('retry.json').length === 3,
      30_000,
    );
    expect(
      logsOf(k)
        .filter((l) => l.msg === 'file' && l.path === 'retry.json')
        .map((l) => [l.action, l.outcome]),
    ).toEqual([
      ['upload', 'done'],
      ['reprocess', 'done'],
      ['reprocess', 'done'],
    ]);
    // Paid through the ledger like every reprocess: the day's spend rose by its price.
    expect(await creditsToday(port)).toBe(before + 5);
    // The state counts the attempt, and so does the daemon's kept index (its plan answers `kbsync plan`).
    const plan = (await ws.runJson('plan')).report;
    expect(itemOf(plan, 'retry.json')).toMatchObject({ action: 'skip:remote-failed' });
    expect(itemOf(plan, 'retry.json').reason).toMatch(/already reprocessed 1 of 1 times/);
    expect(reprocessesOf(ds)).toHaveLength(2);
    suite.proxy.setHooks({});
  }, 120_000);

  it('Now: a running cycle says why it runs, its calls done of planned, credits so far and its ETA, in kbsync status --json and on the page', async () => {
    const ds = suite.svc.dataset();
    // One call every 2 s: the 10 uploads of the cycle take about 20 s, which the rate limit decides; while
    // 5 or more are left (10 s at that rate) the cycle has an ETA.
    const ws = workspace(ds, { upload: { concurrency: 1, requestsPerSecond: 0.5, maxReprocessAttempts: 0 } });
    ws.write('a.md', '# A\n');
    const port = await freePort();
    const k = await startPageDaemon(ws, `127.0.0.1:${port}`);
    children.push(k);
    const host = { host: `127.0.0.1:${port}` };
    for (let i = 0; i < 10; i++) ws.write(`batch/${i}.md`, `# Note ${i}\n\nSome words for note ${i}.\n`);
    type Cycle = { startedAt: string; reasons: string[]; done: number; total: number; creditsSoFar: number; etaAt: string | null } | null;
    const statusCycle = async (): Promise<Cycle> =>
      ((await ws.runJson('status')).report as unknown as { daemon: { cycle?: Cycle } }).daemon.cycle ?? null;
    const paced = (c: Cycle): c is NonNullable<Cycle> => c !== null && c.total === 10 && c.done >= 1 && c.etaAt !== null;
    const words =
      /A sync cycle runs for changes.*\d of 10 paid calls done, \d+ credits so far; the rate limit \(upload\.requestsPerSecond\) has it end about/;
    // kbsync status --json, GET /api/status and the page, read one after the other while the cycle is paced.
    let seen: { cli: Cycle; api: Cycle; page: string } = { cli: null, api: null, page: '' };
    await until(
      'a paced cycle with a call done, in kbsync status --json, /api/status and on the page',
      async () => {
        const cli = await statusCycle();
        if (!paced(cli)) return false;
        const api = (JSON.parse((await rawRequest(port, '/api/status', { headers: host })).body) as { daemon: { cycle: Cycle } }).daemon
          .cycle;
        seen = { cli, api, page: (await rawRequest(port, '/', { headers: host })).body };
        return paced(api) && words.test(seen.page);
      },
      60_000,
    );
    const cycle = seen.cli as NonNullable<Cycle>;
    expect(cycle.reasons).toContain('changes');
    expect(cycle.creditsSoFar).toBeGreaterThanOrEqual(cycle.done);
    expect(seen.api).toMatchObject({ startedAt: cycle.startedAt, total: 10, reasons: cycle.reasons });
    await until('the cycle over', async () => (await statusCycle()) === null, 60_000);
  }, 120_000);
});
