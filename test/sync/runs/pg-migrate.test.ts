import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openState, type StateStore } from '../../../src/sync/state/index.js';
import { createWorkspace, runKbsync } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { freshDatabase } from '../../helpers/postgres.js';

const suite = useE2eSuite();

/** What a state holds, read back through the StateStore: files, money, runs, meta. */
function contents(where: string): unknown {
  const s: StateStore = openState(where, { lock: false, scope: 'docs' });
  try {
    const ledger = s.ledgerTotals();
    const tracked = [...s.loadTrackedFiles().values()];
    return {
      files: tracked.map((f) => [f.source, f.path, f.sha256, f.remoteId, f.remoteName, f.mtimeNs, f.lastAction]),
      // Each row whole, with what the index leaves out (the chunk count, the service's reason).
      rows: tracked.map((f) => s.getTracked(f.source, f.path)),
      ledger: { all: ledger.all, byMonth: [...ledger.byMonth] },
      problems: s.verifyTotals(),
      pending: s.pendingOps().map((o) => [o.id, o.path, o.idempotencyKey]),
      meta: [s.getMeta('rebuilt_from_remote') !== null, s.remoteCheckPending()],
      webhooks: s.webhookEvents().map((w) => w.id),
      entries: [...s.trackedEntries().values()],
      payloads: s.pendingOps().map((o) => o.payload),
      held: s.heldCopies(),
    };
  } finally {
    s.close();
  }
}

describe('kbsync state migrate', () => {
  it('moves a state file to PostgreSQL and back, every row read back the same; syncing goes on without paying again', async () => {
    const url = await freshDatabase('migrate');
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
    for (const n of [1, 2, 3]) ws.write(`d${n}.md`, `# doc ${n}\n`);
    expect((await ws.runJson('sync')).report.summary).toMatchObject({ uploaded: 3, creditsSpent: 15 });
    // A copy no file points at any more travels too: d1.md going back to it is free on the new state.
    ws.write('d1.md', '# doc 1, edited\n');
    expect((await ws.runJson('sync')).report.summary).toMatchObject({ uploaded: 1, creditsSpent: 5 });
    // Open work travels too: a queued op keeps its idempotency key.
    const file = openState(ws.statePath);
    const run = file.startRun('sync');
    file.enqueue({
      kind: 'upload',
      source: 'docs',
      path: 'later.md',
      sha256: 'c'.repeat(64),
      size: 1,
      mtimeNs: '1',
      inode: 1,
      remoteName: 'later.md',
      credits: 5,
      runId: run,
    });
    file.finishRun(run, 'stopped', null);
    // Received now: an old delivery would be pruned by the next open of the state (state/sqlite/webhook-events.ts).
    const nowMs = Date.now();
    file.recordWebhookEvent({ id: 'msg_1', type: 'webhook.test', sentAtSec: Math.floor(nowMs / 1000), receivedAtMs: nowMs, data: null });
    const payload = { agentId: 'ag1', entries: [{ sha256: 'd'.repeat(64), source: 'docs', path: 'faq.json#q', title: null }] };
    file.enqueue({ kind: 'intelligence', source: 'docs', path: 'faq.json#q', digest: 'e'.repeat(64), payload, credits: 1 });
    file.recordEntries([
      { sha256: 'a'.repeat(64), agentId: 'ag1', remoteId: 'e9', status: 'processed', source: 'docs', path: 'x.json#k', title: 'K' },
    ]);
    const d2 = file.getTracked('docs', 'd2.md');
    file.recordListing([{ id: d2?.remoteId as string, status: 'processed', error: null, chunkCount: 7 }]);
    file.close();
    const before = contents(ws.statePath);
    expect(JSON.stringify(before)).toContain('"remoteChunks":7');

    const out = await ws.run('state', 'migrate', '--to', url, '--json');
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ counts: { files: 3, outbox: 2, webhookEvents: 1, intelEntries: 1, remoteCopies: 1 } });
    expect(contents(url)).toEqual(before);

    // Into a database that is not empty: refused, nothing written.
    const again = await ws.run('state', 'migrate', '--to', url);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/not empty/);

    ws.configure({ state: url });
    expect((await ws.runJson('plan')).report.summary).toMatchObject({ uploaded: 0, unchanged: 3 });
    ws.write('d1.md', '# doc 1\n');
    expect((await ws.runJson('plan')).report.summary).toMatchObject({ uploaded: 0, renamed: 1, unchanged: 2, creditsPlanned: 0 });
    ws.write('d1.md', '# doc 1, edited\n');

    const back = join(ws.root, 'back', 'state.db');
    const home = await runKbsync(['state', 'migrate', '--to', back, '-c', ws.configPath], ws.root);
    expect(home.code, home.stderr).toBe(0);
    expect(home.stdout).toMatch(/^migrated .* -> .*back\/state\.db: 3 files, \d+ runs, 2 outbox/);
    expect(existsSync(back)).toBe(true);
    expect(contents(back)).toEqual(before);
    ws.configure({ state: back });
    expect((await ws.runJson('sync')).report.summary).toMatchObject({ uploaded: 0, unchanged: 3, creditsSpent: 0 });
    // The three first uploads and the edit's: nothing bought again.
    expect((await ds.files()).length).toBe(4);
  });
});
