import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../src/client/webhook-verify.js';
import { openState, type WebhookEventRecord } from '../../../src/sync/state/index.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs, createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import type { KbsyncChild } from '../../helpers/kbsync-child.js';
import { apiFor, startHarness, type Api, type Harness } from '../../service/helpers.js';
import { startDaemon, useChildren, until, freePort, logsOf, type LogLine, untilDaemonReady } from '../../helpers/daemon-children.js';

/*
 * POST /webhooks of `kbsync watch --http`, fed by the local service's own webhook dispatcher (started
 * with allowInsecureWebhooks so that it may deliver to the daemon's loopback URL), and by hand-made
 * forged, stale and replayed deliveries, across a restart of the daemon.
 */

let h: Harness;
const temp = createTempDirs();
beforeAll(async () => {
  await ensureDist();
  h = await startHarness({ allowInsecureWebhooks: true });
}, 180_000);
afterAll(async () => {
  await h.close();
  temp.cleanup();
});

const children = useChildren();

const accepted = (k: KbsyncChild): LogLine[] => logsOf(k).filter((l) => l.msg === 'webhook delivery accepted');

function watch(ws: Workspace, port: number, secret: string): KbsyncChild {
  return startDaemon(children, ws, ['--http', `127.0.0.1:${port}`], { KBSYNC_WEBHOOK_SECRET: secret });
}

async function ready(ws: Workspace, k: KbsyncChild): Promise<void> {
  await untilDaemonReady(k, `${ws.statePath}.watch.json`);
}

async function post(port: number, headers: Record<string, string>, body: string): Promise<number> {
  const res = await request(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await res.body.text();
  return res.statusCode;
}

function signedDelivery(secret: string, id: string, tsSec: number, body: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(tsSec), 'webhook-signature': signWebhook(secret, id, tsSec, body) };
}

describe('kbsync watch: POST /webhooks', () => {
  it("records the service's intelligence and mode events, refuses forged, stale and replayed deliveries (also after a restart), never logs the secret", async () => {
    const api: Api = apiFor(h, { plan: 'pro', credits: 1000 });
    const port = await freePort();
    const hook = await api.call('POST', '/api/v2/ext/webhooks', { json: { url: `http://127.0.0.1:${port}/webhooks` } });
    expect(hook.status).toBe(201);
    const secret = hook.body.secret as string;
    const ws = createWorkspace(temp.make(), {
      baseUrl: h.service.url,
      apiKey: api.key,
      config: { watch: { debounceMs: 300, webhookSecret: '${KBSYNC_WEBHOOK_SECRET}' } },
    });
    ws.write('a.md', '# A\n');
    let k = watch(ws, port, secret);
    await ready(ws, k);

    // Real deliveries from the service's dispatcher: a mode change, an intelligence entry processed, a test event.
    const agent = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'helper', config: {} } });
    const patched = await api.call('PATCH', `/api/v2/ext/agents/${agent.body.id}/datasets/${api.datasetId}`, {
      json: { mode: 'self_learning' },
    });
    expect(patched.status).toBe(200);
    const entry = await api.call('POST', '/api/v2/ext/datasets/intelligence', {
      json: { agent_id: agent.body.id, content: 'Deploys happen on Tuesdays.' },
    });
    expect(entry.status).toBeLessThan(300);
    const test = await api.call('POST', `/api/v2/ext/webhooks/${hook.body.id}/test`);
    expect(test.body).toEqual({ delivered: true, status: 200 });
    await until('three deliveries accepted', () => accepted(k).length >= 3);

    // Hand-made deliveries: forged, stale (well signed, 10 min old), a good one, then that one again.
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      type: 'intelligence.failed',
      created_at: new Date().toISOString(),
      data: { entry_id: 99, dataset_id: 1, agent_id: 1, sha256: 'x', error: 'boom' },
    });
    const forged = { ...signedDelivery(secret, 'evt_forged', now, body), 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` };
    const otherKey = signedDelivery(`whsec_${randomBytes(32).toString('base64')}`, 'evt_other', now, body);
    const tampered = signedDelivery(secret, 'evt_tampered', now, body);
    const stale = signedDelivery(secret, 'evt_stale', now - 600, body);
    const good = signedDelivery(secret, 'evt_mine', now, body);
    const statuses = [
      await post(port, forged, body),
      await post(port, otherKey, body),
      await post(port, tampered, body.replace('boom', 'fine')),
      await post(port, stale, body),
      await post(port, good, body),
      await post(port, good, body),
    ];
    expect(statuses).toEqual([401, 401, 401, 401, 200, 409]);
    const metrics = await (await request(`http://127.0.0.1:${port}/metrics`)).body.text();
    const count = (outcome: string): number =>
      Number(new RegExp(`^kbsync_webhooks_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    expect([count('accepted'), count('bad_signature'), count('stale_timestamp'), count('replayed')]).toEqual([4, 3, 1, 1]);
    const huge = JSON.stringify({ type: 'intelligence.failed', data: { error: 'x'.repeat(1_500_000) } });
    expect(await post(port, signedDelivery(secret, 'evt_huge', now, huge), huge)).toBe(413);

    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
    k = watch(ws, port, secret);
    await ready(ws, k);
    const again = Math.floor(Date.now() / 1000);
    const replayAfterRestart = await post(port, signedDelivery(secret, 'evt_mine', again, body), body);
    const fresh = await post(port, signedDelivery(secret, 'evt_after_restart', again, body), body);
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);

    expect([replayAfterRestart, fresh]).toEqual([409, 200]);
    const state = openState(ws.statePath);
    let events: WebhookEventRecord[];
    try {
      events = state.webhookEvents();
    } finally {
      state.close();
    }
    const byType = (type: string) => events.filter((e) => e.type === type);
    expect(byType('dataset.mode_changed').map((e) => e.data)).toEqual([
      { agent_id: agent.body.id, dataset_id: Number(api.datasetId), mode: 'self_learning', previous_mode: 'read_only' },
    ]);
    expect(byType('intelligence.processed').map((e) => e.data)).toEqual([
      expect.objectContaining({ entry_id: entry.body.id, agent_id: agent.body.id }),
    ]);
    expect(byType('webhook.test').map((e) => e.data)).toEqual([null]);
    expect(
      byType('intelligence.failed')
        .map((e) => e.id)
        .sort(),
    ).toEqual(['evt_after_restart', 'evt_mine']);
    expect(events.map((e) => e.id)).not.toEqual(expect.arrayContaining(['evt_forged']));
    expect(events).toHaveLength(5);
    expect(k.stderrSoFar() + children.map((c) => c.stderrSoFar()).join('')).not.toContain(secret.slice(6, 30));
  });

  it('answers 404 on POST /webhooks when no secret is configured', async () => {
    const api: Api = apiFor(h, { plan: 'basic', credits: 1000 });
    const port = await freePort();
    const ws = createWorkspace(temp.make(), { baseUrl: h.service.url, apiKey: api.key });
    const k = watch(ws, port, 'unused');
    await ready(ws, k);
    const body = '{"type":"webhook.test","data":{}}';
    const status = await post(
      port,
      signedDelivery(`whsec_${randomBytes(32).toString('base64')}`, 'evt_1', Math.floor(Date.now() / 1000), body),
      body,
    );
    k.child.kill('SIGTERM');
    await k.exited;
    expect(status).toBe(404);
  });
});
