import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { uploadCost } from '../../../src/shared/plans.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, pathsWith, type Workspace } from '../../helpers/e2e-workspace.js';
import { isUpload, type FaultHooks } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

/**
 * The paid-call queue as the service sees it: `upload.concurrency` bounds the uploads in flight at once
 * and `upload.requestsPerSecond` the uploads started per second. Measured at the fault proxy, in front
 * of the real local service, on what a real `kbsync sync` sends.
 */

const suite = useE2eSuite({ proxy: true });

const forward = { kind: 'forward' } as const;
const contentOf = (name: string): string => `# ${name}\n\nsome text of its own\n`;

/** A workspace syncing through the proxy with `upload`, holding `count` small distinct files (5 credits each). */
function setup(
  count: number,
  upload: { concurrency: number; requestsPerSecond: number },
): { ds: E2eDataset; ws: Workspace; names: string[]; credits: number } {
  suite.proxy.setHooks({});
  suite.proxy.requests.length = 0;
  const ds = suite.svc.dataset({ credits: 10_000 });
  const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.proxy.url, apiKey: ds.apiKey, config: { upload } });
  const names = Array.from({ length: count }, (_, i) => `doc-${String(i).padStart(2, '0')}.md`);
  for (const name of names) ws.write(name, contentOf(name));
  const credits = names.reduce((sum, name) => sum + uploadCost(Buffer.byteLength(contentOf(name))), 0);
  return { ds, ws, names, credits };
}

/** Names of the files the proxy saw uploaded, one per upload request, sorted. */
const uploadedNames = (): string[] =>
  suite.proxy.requests
    .filter(isUpload)
    .map((r) => /filename="([^"]+)"/.exec(r.body.toString('latin1'))?.[1] ?? '?')
    .sort();

/**
 * Proxy hooks that hold each upload until `limit` uploads are in flight at the proxy at once (or every
 * upload still unanswered, near the end), then let the held ones through together: so that the queue,
 * if it allows `limit` at once, is seen to reach `limit`, however fast the service answers. In flight
 * means from the proxy reading the request to the service's answer coming back, a part of the time the
 * call holds its slot in kbsync's queue, so the count seen here never exceeds the queue's.
 * If the gate has held a request for `fallbackMs` without filling (the queue sends fewer at once than
 * `limit`), it opens for good: the test then fails on the count instead of hanging.
 */
function holdUntilFull(
  limit: number,
  total: number,
  fallbackMs: number,
): { hooks: FaultHooks; maxInFlight(): number; fellBack(): boolean } {
  let inFlight = 0;
  let maxInFlight = 0;
  let answered = 0;
  let open = false;
  let fallback: NodeJS.Timeout | undefined;
  const held: (() => void)[] = [];
  const releaseIfFull = (): void => {
    if (!open && inFlight < Math.min(limit, total - answered)) return;
    clearTimeout(fallback);
    fallback = undefined;
    for (const release of held.splice(0)) release();
  };
  return {
    hooks: {
      onRequest: async (req) => {
        if (!isUpload(req)) return forward;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const released = new Promise<void>((resolve) => held.push(resolve));
        releaseIfFull();
        if (held.length > 0) {
          fallback ??= setTimeout(() => {
            open = true;
            releaseIfFull();
          }, fallbackMs);
        }
        await released;
        return forward;
      },
      onResponse: (req) => {
        if (isUpload(req)) {
          inFlight--;
          answered++;
          releaseIfFull();
        }
        return 'relay';
      },
    },
    maxInFlight: () => maxInFlight,
    fellBack: () => open,
  };
}

describe('upload.concurrency: uploads in flight at once, as the service sees them', () => {
  it.each([
    { concurrency: 8, files: 30 },
    { concurrency: 3, files: 10 },
    { concurrency: 1, files: 4 },
  ])(
    'with concurrency $concurrency and $files files: exactly $concurrency in flight at the peak, never more; every file uploaded once, for the planned credits',
    async ({ concurrency, files }) => {
      const { ds, ws, names, credits } = setup(files, { concurrency, requestsPerSecond: 1000 });
      // 2 s: the queue starts its first `concurrency` calls together, so they reach the proxy within
      // milliseconds; the fallback only opens the gate when the queue never sends that many at once.
      const gate = holdUntilFull(concurrency, files, 2_000);
      suite.proxy.setHooks(gate.hooks);
      const before = await ds.balance();

      const run = await ws.runJson('sync');

      const why = gate.fellBack() ? `the gate waited 2 s for ${concurrency} uploads in flight at once, then gave up` : 'the gate filled';
      expect(gate.maxInFlight(), why).toBe(concurrency);
      expect(run.code).toBe(0);
      expect(run.report.summary).toMatchObject({ uploaded: files, failed: 0, deferred: 0, creditsPlanned: credits, creditsSpent: credits });
      expect(pathsWith(run.report, 'upload')).toEqual(names);
      expect(uploadedNames()).toEqual(names);
      expect(before - (await ds.balance())).toBe(credits);
      expect((await ds.files()).map((f) => f.name).sort()).toEqual(names);
    },
  );
});

/**
 * Slack at the edges of the one-second windows below. The queue starts at most `requestsPerSecond`
 * calls per 1,000 ms window of its own timer; the proxy sees each start plus the time from it to the
 * proxy having read the request: a durable reservation (a SQLite commit with synchronous=FULL; the
 * calls of one window make theirs one after another on the event loop), a stat, the multipart body
 * over a socket. That time varies from call to call, and a window whose calls were slow followed by
 * one whose calls were fast brings their arrivals closer than 1,000 ms, by more when every core is busy
 * and the disk flushing (Node's timers also round to whole milliseconds). So a slow machine does not
 * only spread the requests out, and a few milliseconds of slack would fail there. 250 ms is wide of
 * that, and every likely break still fails:
 * no limit or a limit above 4 (5 or more uploads within milliseconds), or windows of 500 ms (8 within
 * half a second).
 */
const EDGE_SLACK_MS = 250;

describe('upload.requestsPerSecond: uploads started per second, as the service sees them', () => {
  it('with 4 per second and concurrency 16: no window of a second holds more than 4 upload arrivals; every file uploaded, for the planned credits', async () => {
    const rps = 4;
    // Fewer files than the concurrency, so only the rate spaces them out: windows of 4 + 4 + 4 + 1, about 3 s.
    const files = 13;
    const { ds, ws, names, credits } = setup(files, { concurrency: 16, requestsPerSecond: rps });
    const arrivals: number[] = [];
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (isUpload(req)) arrivals.push(performance.now());
        return forward;
      },
    });
    const before = await ds.balance();

    const run = await ws.runJson('sync');

    expect(run.code).toBe(0);
    expect(run.report.summary).toMatchObject({ uploaded: files, failed: 0, deferred: 0, creditsPlanned: credits, creditsSpent: credits });
    expect(uploadedNames()).toEqual(names);
    expect(before - (await ds.balance())).toBe(credits);
    expect(arrivals).toHaveLength(files);
    const at = (i: number): number => arrivals[i] as number;
    const offsets = arrivals.map((t) => Math.round(t - at(0))).join(', ');
    // A window of a second holding more than `rps` arrivals holds some upload i and upload i + rps.
    for (let i = 0; i + rps < files; i++) {
      expect(
        at(i + rps) - at(i),
        `upload ${i + rps} less than a second after upload ${i} (arrivals at ${offsets} ms)`,
      ).toBeGreaterThanOrEqual(1_000 - EDGE_SLACK_MS);
    }
    // And over the whole run: 13 uploads at 4 a second span at least three seconds, first to last.
    expect(at(files - 1) - at(0), `arrivals at ${offsets} ms`).toBeGreaterThanOrEqual((Math.ceil(files / rps) - 1) * 1_000 - EDGE_SLACK_MS);
  });

  it('a fractional rate above 1 is rounded down: 2.5 a second lets 2 a second through, never 3', async () => {
    const { ws, names } = setup(6, { concurrency: 16, requestsPerSecond: 2.5 });
    const arrivals: number[] = [];
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (isUpload(req)) arrivals.push(performance.now());
        return forward;
      },
    });

    const run = await ws.runJson('sync');

    expect(run.code).toBe(0);
    expect(uploadedNames()).toEqual(names);
    const offsets = arrivals.map((t) => Math.round(t - (arrivals[0] as number))).join(', ');
    for (let i = 0; i + 2 < arrivals.length; i++) {
      expect((arrivals[i + 2] as number) - (arrivals[i] as number), `arrivals at ${offsets} ms`).toBeGreaterThanOrEqual(
        1_000 - EDGE_SLACK_MS,
      );
    }
  });

  it('one limit for the whole run: the reindex after the uploads waits its turn like an upload', async () => {
    suite.proxy.setHooks({});
    suite.proxy.requests.length = 0;
    const ds = suite.svc.dataset({ plan: 'pro', credits: 10_000 });
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.proxy.url,
      apiKey: ds.apiKey,
      plan: 'pro',
      config: { upload: { concurrency: 16, requestsPerSecond: 4 }, reindex: { minChangedFiles: 4 } },
    });
    for (let i = 0; i < 4; i++) ws.write(`r${i}.md`, contentOf(`r${i}`));
    const arrivals: { paid: string; at: number }[] = [];
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (isUpload(req)) arrivals.push({ paid: 'upload', at: performance.now() });
        else if (req.method === 'POST' && /\/reindex\/?(\?|$)/.test(req.url)) arrivals.push({ paid: 'reindex', at: performance.now() });
        return forward;
      },
    });

    const run = await ws.runJson('sync');

    expect(run.code).toBe(0);
    expect(arrivals.map((a) => a.paid)).toEqual(['upload', 'upload', 'upload', 'upload', 'reindex']);
    const offsets = arrivals.map((a) => Math.round(a.at - (arrivals[0] as { at: number }).at)).join(', ');
    expect((arrivals[4] as { at: number }).at - (arrivals[0] as { at: number }).at, `arrivals at ${offsets} ms`).toBeGreaterThanOrEqual(
      1_000 - EDGE_SLACK_MS,
    );
  });
});
