import { existsSync, readFileSync } from 'node:fs';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { startDaemon, useChildren, until } from '../../helpers/daemon-children.js';

/*
 * The event-loop lag of `kbsync watch --http` on /metrics: what a dashboard or an alert on
 * nodejs_eventloop_lag_p99_seconds reads of an idle daemon is its lag, not the sampling period.
 */

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 120_000 });
const children = useChildren();

const LAG = ['min', 'max', 'mean', 'p50', 'p90', 'p99'].map((s) => `nodejs_eventloop_lag_${s}_seconds`);

describe('kbsync watch --http: event-loop lag metrics', () => {
  it('an idle daemon reports a lag well under a second, also when scraped twice in a row', async () => {
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: suite.svc.dataset().apiKey });
    ws.write('a.md', '# A\n');
    startDaemon(children, ws, ['--http', '127.0.0.1:0']);
    const statusPath = `${ws.statePath}.watch.json`;
    await until(
      'the daemon ready',
      () => existsSync(statusPath) && (JSON.parse(readFileSync(statusPath, 'utf8')) as { ready: boolean }).ready,
    );
    const { http } = JSON.parse(readFileSync(statusPath, 'utf8')) as { http: string };
    const scrape = async (): Promise<Record<string, number>> => {
      const text = await (await request(`http://${http}/metrics`)).body.text();
      return Object.fromEntries(LAG.map((name) => [name, Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])]));
    };
    // The lag is sampled every few seconds: wait for two samples of the idle daemon.
    await new Promise((r) => setTimeout(r, 11_000));
    for (const values of [await scrape(), await scrape()]) {
      for (const [name, v] of Object.entries(values)) {
        expect({ name, finite: Number.isFinite(v) }).toEqual({ name, finite: true });
        expect({ name, v, under: v >= 0 && v < 1 }).toMatchObject({ name, under: true });
      }
    }
  });
});
