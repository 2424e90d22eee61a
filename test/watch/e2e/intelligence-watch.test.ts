import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs, createWorkspace } from '../../helpers/e2e-workspace.js';
import { apiFor, startHarness, type Harness } from '../../service/helpers.js';
import { startDaemon, useChildren, until, freePort } from '../../helpers/daemon-children.js';

/*
 * The whole loop of an intelligence source under `kbsync watch --http`: the daemon's first sync writes the
 * entries, the local service processes them and delivers `intelligence.processed` to the daemon's
 * POST /webhooks (the service started with allowInsecureWebhooks so that it may deliver to loopback), and
 * the daemon sets each entry's status in the state.
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

/** The state's entries (status by service id), read beside the running daemon (WAL: readers do not block it). */
function entryStatuses(statePath: string): Map<string, string | null> {
  if (!existsSync(statePath)) return new Map();
  const db = new Sqlite(statePath, { readonly: true, fileMustExist: true });
  try {
    const hasTable = db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'intel_entries'`).get() !== undefined;
    if (!hasTable) return new Map();
    const rows = db.prepare('SELECT remote_id, status FROM intel_entries').all() as { remote_id: string; status: string | null }[];
    return new Map(rows.map((r) => [r.remote_id, r.status]));
  } finally {
    db.close();
  }
}

describe('kbsync watch --http: intelligence entries', () => {
  it("writes the entries, and the service's intelligence.processed deliveries set their status in the state", async () => {
    const api = apiFor(h, { plan: 'basic', credits: 1000 });
    const agent = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'helper' } });
    await api.call('PATCH', `/api/v2/ext/agents/${agent.body.id}/datasets/${api.datasetId}`, { json: { mode: 'self_learning' } });
    const port = await freePort();
    const hook = await api.call('POST', '/api/v2/ext/webhooks', {
      json: { url: `http://127.0.0.1:${port}/webhooks`, events: ['intelligence.processed', 'intelligence.failed'] },
    });
    expect(hook.status).toBe(201);
    const ws = createWorkspace(temp.make(), {
      baseUrl: h.service.url,
      apiKey: api.key,
      config: {
        sources: [{ name: 'kb', path: './kb', as: 'intelligence', agent: agent.body.id }],
        watch: { debounceMs: 300, webhookSecret: '${KBSYNC_WEBHOOK_SECRET}' },
      },
    });
    mkdirSync(join(ws.root, 'kb'));
    writeFileSync(
      join(ws.root, 'kb', 'faq.yaml'),
      '- question: When do we deploy?\n  answer: On Tuesdays.\n- content: Backups run nightly.\n',
    );

    const k = startDaemon(children, ws, ['--http', `127.0.0.1:${port}`], { KBSYNC_WEBHOOK_SECRET: hook.body.secret as string });
    await until('both entries processed in the state', () => {
      const statuses = [...entryStatuses(ws.statePath).values()];
      return statuses.length === 2 && statuses.every((s) => s === 'processed');
    });
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);

    const remote = (await api.call('GET', '/api/v2/ext/datasets/intelligence')).body.entries as { id: number; status: string }[];
    expect(remote.map((e) => e.status)).toEqual(['processed', 'processed']);
    expect([...entryStatuses(ws.statePath).keys()].sort()).toEqual(remote.map((e) => String(e.id)).sort());
    const accepted = k
      .stderrSoFar()
      .split('\n')
      .filter((l) => l.includes('webhook delivery accepted'))
      .map((l) => JSON.parse(l) as { type: string; entries: number });
    expect(accepted.map((l) => [l.type, l.entries])).toEqual([
      ['intelligence.processed', 1],
      ['intelligence.processed', 1],
    ]);
    expect(readFileSync(ws.configPath, 'utf8')).not.toContain(hook.body.secret as string);
  });
});
