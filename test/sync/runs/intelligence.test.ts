import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { receiveWebhook } from '../../../src/watch/http/webhooks.js';
import { openState } from '../../../src/sync/state/index.js';
import type { EntryTotals } from '../../../src/sync/types.js';
import { createTempDirs, createWorkspace, type JsonReport, type Workspace } from '../../helpers/e2e-workspace.js';
import { createGitOrigin, GIT_ENV } from '../../helpers/e2e-git.js';
import { junitSchemaErrors, parseJunit, parseMarkdown } from '../../helpers/ci-reports.js';
import { startFaultProxy, type FaultProxy, type ProxiedRequest } from '../../helpers/fault-proxy.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { apiFor, credits, newAgent, startHarness, type Api, type Harness } from '../../service/helpers.js';
import type { Plan } from '../../../src/shared/plans.js';
import { FAQ_YAML } from '../../helpers/entry-files.js';

/*
 * Sources with `as: intelligence` against the local service (started with allowInsecureWebhooks so that its
 * dispatcher may deliver to a loopback receiver): entries written once and never again, a duplicate
 * across files charged once, batch writes on the Advanced tier and single writes below it, the read_only
 * stop and the ensureSelfLearning switch with its `dataset.mode_changed` event, and the service's
 * `intelligence.*` events updating each entry's status in the state.
 */

let h: Harness;
let hooks: WebhookReceiver;
const temp = createTempDirs();
beforeAll(async () => {
  h = await startHarness({ allowInsecureWebhooks: true });
  hooks = await startWebhookReceiver();
});
afterAll(async () => {
  await hooks.close();
  await h.close();
  temp.cleanup();
});

type IntelReport = JsonReport & {
  intelligence: {
    mode: 'batch' | 'single';
    summary: EntryTotals;
    items: {
      source: string;
      path: string;
      action: string;
      reason: string;
      credits: number;
      sha256: string | null;
      remoteId: string | null;
      outcome?: string;
    }[];
  };
};

/** A dataset with an agent (self_learning unless `readOnly`) and a workspace whose `kb` source writes its entries. */
async function setup(o: {
  plan: Plan;
  readOnly?: boolean;
  ensure?: boolean;
  credits?: number;
}): Promise<{ api: Api; agent: string; ws: Workspace }> {
  const api = apiFor(h, { plan: o.plan, credits: o.credits ?? 1000 });
  const agent = await newAgent(api, o.readOnly === true ? 'read_only' : 'self_learning');
  const ws = createWorkspace(temp.make(), {
    baseUrl: h.service.url,
    apiKey: api.key,
    plan: o.plan,
    config: {
      sources: [
        { name: 'docs', path: './docs' },
        { name: 'kb', path: './kb', as: 'intelligence', agent, ...(o.ensure === true ? { ensureSelfLearning: true } : {}) },
      ],
    },
  });
  mkdirSync(join(ws.root, 'kb'), { recursive: true });
  return { api, agent: String(agent), ws };
}

function writeKb(ws: Workspace, path: string, content: string): void {
  writeFileSync(join(ws.root, 'kb', path), content);
}

async function runIntel(ws: Workspace, ...args: string[]): Promise<{ code: number; stderr: string; report: IntelReport }> {
  const r = await ws.runJson(...args);
  return { code: r.code, stderr: r.stderr, report: r.report as IntelReport };
}

async function entriesOf(api: Api): Promise<{ id: number; sha256: string; status: string }[]> {
  return (await api.call('GET', '/api/v2/ext/datasets/intelligence?limit=1000')).body.entries;
}

/** The state's ledger rows of one kind (reserve, spend, release), read from its SQLite file. */
function ledgerRows(ws: Workspace, kind: string): { credits: number }[] {
  const db = new Sqlite(ws.statePath, { readonly: true });
  try {
    return db.prepare('SELECT credits FROM ledger WHERE kind = ? ORDER BY id').all(kind) as { credits: number }[];
  } finally {
    db.close();
  }
}

const FACTS_JSONL = [
  '{"content": "Backups run nightly at 02:00 UTC.", "title": "Backups"}',
  '{"content": "The VPN needs a hardware key."}',
].join('\n');
// Row 1 repeats a JSONL record word for word: a duplicate across files.
const GLOSSARY_CSV = 'content,title\nBackups run nightly at 02:00 UTC.,Backups again\nSLO means service level objective.,SLO\n';
const RUNBOOK_MD = '# Restart the API\n\nRun `make restart` on the bastion.\n\n# Rotate keys\n\nOnce a quarter.\n';

describe('kbsync sync: intelligence sources', () => {
  it('writes each entry once (a duplicate across files charged once), one call per entry below the Advanced tier, and nothing when unchanged', async () => {
    const { api, ws } = await setup({ plan: 'basic' });
    ws.write('a.md', '# A file\n');
    writeKb(ws, 'faq.yaml', FAQ_YAML);
    writeKb(ws, 'facts.jsonl', FACTS_JSONL);
    writeKb(ws, 'glossary.csv', GLOSSARY_CSV);
    writeKb(ws, 'runbook.md', RUNBOOK_MD);
    writeKb(ws, 'notes.txt', 'a note, not an entry file');

    const plan = await runIntel(ws, 'plan');
    expect(plan.code).toBe(0);
    const intel = plan.report.intelligence;
    expect(intel.mode).toBe('single');
    expect(intel.summary).toMatchObject({ written: 7, duplicate: 1, unchanged: 0, skipped: 1, failed: 0, creditsPlanned: 7 });
    expect(intel.items.find((i) => i.path === 'notes.txt')).toMatchObject({ action: 'skip:unsupported', credits: 0 });
    // The plan's credits: 5 for the upload of a.md, then 1 per new entry.
    expect(plan.report.summary.creditsPlanned).toBe(5 + 7);
    const dup = intel.items.find((i) => i.action === 'skip:duplicate-content');
    expect(dup).toMatchObject({ source: 'kb', path: 'glossary.csv#1', credits: 0 });
    expect(dup?.reason).toContain('kb/facts.jsonl#1');
    const text = await ws.run('plan');
    expect(text.stdout).toContain('intelligence entries, one write per entry (batches need the Advanced tier):');
    expect(text.stdout).toMatch(/entries: 7 to write, 0 unchanged, 1 duplicate, 1 skipped, 0 deferred, 0 failed; 7 credits planned/);

    const before = await credits(api);
    const sync = await runIntel(ws, 'sync');
    expect(sync.code).toBe(0);
    expect(sync.report.intelligence.summary).toMatchObject({ written: 7, duplicate: 1, failed: 0, creditsSpent: 7 });
    expect(sync.report.summary.creditsSpent).toBe(5 + 7);
    expect(before - (await credits(api))).toBe(5 + 7);
    const remote = await entriesOf(api);
    expect(remote).toHaveLength(7);
    // One paid call per entry (single writes), each reserved and spent in the state's ledger, and the upload.
    expect(
      ledgerRows(ws, 'spend')
        .map((r) => r.credits)
        .sort(),
    ).toEqual([1, 1, 1, 1, 1, 1, 1, 5]);
    const state = openState(ws.statePath);
    try {
      const tracked = state.trackedEntries();
      expect([...tracked.keys()].sort()).toEqual(remote.map((e) => e.sha256).sort());
      expect([...tracked.values()].every((e) => e.remoteId !== null && e.source === 'kb')).toBe(true);
    } finally {
      state.close();
    }

    // Unchanged: nothing planned, nothing sent, nothing charged.
    const again = await runIntel(ws, 'sync');
    expect(again.code).toBe(0);
    expect(again.report.intelligence.summary).toMatchObject({ written: 0, unchanged: 7, duplicate: 1, creditsSpent: 0, creditsPlanned: 0 });
    expect(before - (await credits(api))).toBe(5 + 7);
    expect(await entriesOf(api)).toHaveLength(7);
    expect(ledgerRows(ws, 'spend')).toHaveLength(8);

    // One record edited: only its new content is written.
    writeKb(ws, 'facts.jsonl', FACTS_JSONL.replace('hardware key', 'hardware key and a PIN'));
    const edited = await runIntel(ws, 'sync', '--junit', 'junit.xml', '--report-md', 'report.md');
    const changed = edited.report.intelligence.items.filter((i) => i.action === 'write');
    expect(changed.map((i) => i.path)).toEqual(['facts.jsonl#2']);
    expect(changed[0]?.reason).toMatch(/^changed; its previous text stays in the dataset as entry \d+ \(the API has no delete\)$/);
    expect(before - (await credits(api))).toBe(5 + 8);
    // The CI reports carry the entries: one case each (the unchanged ones counted), valid JUnit.
    const xml = readFileSync(join(ws.root, 'junit.xml'), 'utf8');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    const junit = parseJunit(xml);
    expect(junit.cases.filter((c) => c.outcome === 'passed').map((c) => c.name)).toEqual(['facts.jsonl#2', 'glossary.csv#1']);
    expect(junit.cases.find((c) => c.name === 'facts.jsonl#2')?.systemOut).toBe(`write: ${changed[0]?.reason}; 1 credits`);
    const md = parseMarkdown(readFileSync(join(ws.root, 'report.md'), 'utf8'));
    expect(md.tables[0]?.header).toContain('entries written');
    expect(md.list).toContain('6 unchanged entries not listed');
  });

  it('writes in batches of up to 50 on the Advanced tier: 60 entries in two calls', async () => {
    const { api, ws } = await setup({ plan: 'pro' });
    const lines = Array.from({ length: 60 }, (_, i) => JSON.stringify({ text: `Fact number ${i + 1}.` }));
    writeKb(ws, 'facts.jsonl', lines.join('\n'));
    ws.configure({
      sources: [
        {
          name: 'kb',
          path: './kb',
          as: 'intelligence',
          agent: (await api.call('GET', '/api/v1/ext/agents/')).body.agents[0].id,
          contentField: 'text',
        },
      ],
    });
    // The plan adopts the (empty) listing; then someone else writes fact 7: the state cannot know it.
    expect((await runIntel(ws, 'plan')).report.intelligence.summary).toMatchObject({ written: 60, creditsPlanned: 60 });
    const agentId = (await api.call('GET', '/api/v1/ext/agents/')).body.agents[0].id;
    const other = await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agentId, content: 'Fact number 7.' } });
    expect(other.status).toBe(201);
    const before = await credits(api);
    const sync = await runIntel(ws, 'sync');
    expect(sync.code).toBe(0);
    expect(sync.report.intelligence.mode).toBe('batch');
    // 60 planned; the service found fact 7 a duplicate and charged nothing for it.
    expect(sync.report.intelligence.summary).toMatchObject({ written: 60, creditsPlanned: 60, creditsSpent: 59 });
    const seventh = sync.report.intelligence.items.find((i) => i.path === 'facts.jsonl#7');
    expect(seventh).toMatchObject({ credits: 0, remoteId: String(other.body.id) });
    expect(seventh?.reason).toContain('the service already held it (duplicate, nothing charged)');
    expect(ledgerRows(ws, 'spend').map((r) => r.credits)).toEqual([49, 10]);
    expect(before - (await credits(api))).toBe(59);
    expect(await entriesOf(api)).toHaveLength(60);
    // Recorded under the service's id: the next plan has nothing to write.
    expect((await runIntel(ws, 'plan')).report.intelligence.summary).toMatchObject({ written: 0, unchanged: 60, creditsPlanned: 0 });
  });

  it('stops before any paid call when the agent is read_only, naming what to do', async () => {
    const { api, agent, ws } = await setup({ plan: 'basic', readOnly: true });
    ws.write('a.md', '# A file\n');
    writeKb(ws, 'facts.jsonl', FACTS_JSONL);
    const before = await credits(api);
    const r = await ws.run('sync');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`agent ${agent} (source kb) is attached to dataset ${api.datasetId} in read_only mode`);
    expect(r.stderr).toContain('ensureSelfLearning: true');
    expect(await credits(api)).toBe(before);
    expect(await entriesOf(api)).toHaveLength(0);
    expect(ledgerRows(ws, 'reserve')).toHaveLength(0);
  });

  it('switches a read_only agent to self_learning with ensureSelfLearning (the service emits dataset.mode_changed), then writes', async () => {
    const { api, agent, ws } = await setup({ plan: 'basic', readOnly: true, ensure: true });
    const hook = await api.call('POST', '/api/v2/ext/webhooks', { json: { url: hooks.url, events: ['dataset.mode_changed'] } });
    expect(hook.status).toBe(201);
    const seen = hooks.received.length;
    writeKb(ws, 'facts.jsonl', FACTS_JSONL);
    const r = await runIntel(ws, 'sync');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`agent ${agent} (source kb): switched from read_only to self_learning on dataset ${api.datasetId}`);
    expect(r.report.intelligence.summary).toMatchObject({ written: 2, creditsSpent: 2 });
    const mode = await api.call('GET', `/api/v2/ext/agents/${agent}/datasets`);
    expect(mode.body.datasets).toEqual([expect.objectContaining({ id: Number(api.datasetId), mode: 'self_learning' })]);
    await hooks.waitFor(seen + 1);
    const event = JSON.parse(hooks.received[seen]?.body ?? '{}') as { type: string; data: Record<string, unknown> };
    expect(event.type).toBe('dataset.mode_changed');
    expect(event.data).toMatchObject({
      agent_id: Number(agent),
      dataset_id: Number(api.datasetId),
      mode: 'self_learning',
      previous_mode: 'read_only',
    });
  });

  it("takes the service's intelligence.processed events, as watch --http receives them, into each entry's status", async () => {
    const { api, ws } = await setup({ plan: 'basic' });
    const hook = await api.call('POST', '/api/v2/ext/webhooks', { json: { url: hooks.url, events: ['intelligence.processed'] } });
    const secret = hook.body.secret as string;
    const seen = hooks.received.length;
    writeKb(ws, 'facts.jsonl', FACTS_JSONL);
    const r = await runIntel(ws, 'sync');
    expect(r.report.intelligence.summary.written).toBe(2);
    await hooks.waitFor(seen + 2);
    const deliveries = hooks.received.slice(seen, seen + 2);
    const state = openState(ws.statePath);
    try {
      expect([...state.trackedEntries().values()].map((e) => e.status)).toEqual(['pending', 'pending']);
      const answers = deliveries.map((d) =>
        receiveWebhook(
          { secret, store: state, nowMs: () => Date.now() },
          {
            'webhook-id': d.headers['webhook-id'] as string,
            'webhook-timestamp': d.headers['webhook-timestamp'] as string,
            'webhook-signature': d.headers['webhook-signature'] as string,
          },
          Buffer.from(d.body),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const byId = new Map([...state.trackedEntries().values()].map((e) => [e.remoteId, e.status]));
      const remote = await entriesOf(api);
      expect(remote.map((e) => byId.get(String(e.id)))).toEqual(['processed', 'processed']);
    } finally {
      state.close();
    }
    const status = await ws.run('status');
    expect(status.stdout).toMatch(/intelligence entries:\s+2 \(2 processed\)/);
    const json = JSON.parse((await ws.run('status', '--json')).stdout) as { entries: unknown };
    expect(json.entries).toEqual({ total: 2, byStatus: { processed: 2 } });
  });

  it('admits entries against the budget caps: over maxCreditsPerRun they wait (exit 3, a duplicate with its first), the next run writes them', async () => {
    const { api, ws } = await setup({ plan: 'basic' });
    ws.configure({ budget: { maxCreditsPerRun: 3, maxCreditsPerDay: 100, maxCreditsPerMonth: 100 } });
    const five = Array.from({ length: 5 }, (_, i) => JSON.stringify({ content: `Rule ${i + 1}.` }));
    writeKb(ws, 'rules.jsonl', five.join('\n'));
    writeKb(ws, 'zcopy.jsonl', five[4] as string);
    const before = await credits(api);

    const first = await runIntel(ws, 'sync');
    expect(first.code).toBe(3);
    const byPath = new Map(first.report.intelligence.items.map((i) => [i.path, i]));
    expect([1, 2, 3].map((n) => byPath.get(`rules.jsonl#${n}`)?.action)).toEqual(['write', 'write', 'write']);
    expect([4, 5].map((n) => byPath.get(`rules.jsonl#${n}`)?.action)).toEqual(['defer:over-budget', 'defer:over-budget']);
    expect(byPath.get('rules.jsonl#4')?.reason).toMatch(/maxCreditsPerRun \(3 \+ 1 > 3\)/);
    expect(byPath.get('zcopy.jsonl#1')).toMatchObject({ action: 'defer:over-budget' });
    expect(first.report.intelligence.summary).toMatchObject({ written: 3, deferred: 3, creditsSpent: 3 });
    expect(before - (await credits(api))).toBe(3);

    const second = await runIntel(ws, 'sync');
    expect(second.code).toBe(0);
    expect(second.report.intelligence.summary).toMatchObject({ written: 2, unchanged: 3, duplicate: 1, deferred: 0, creditsSpent: 2 });
    expect(before - (await credits(api))).toBe(5);
  });

  it('names the source and what to check when its agent does not exist', async () => {
    const { ws } = await setup({ plan: 'basic' });
    ws.configure({ sources: [{ name: 'kb', path: './kb', as: 'intelligence', agent: 9999 }] });
    writeKb(ws, 'facts.jsonl', FACTS_JSONL);
    const r = await ws.run('sync');
    // not_found's exit code (docs/errors.md), before anything is sent.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("agent 9999 (source kb): the service knows no such agent in this dataset; check the source's agent id");
  });

  it('a lost state adopts the entries the dataset holds from its listing: nothing is planned again', async () => {
    const { api, ws } = await setup({ plan: 'basic' });
    writeKb(ws, 'facts.jsonl', FACTS_JSONL);
    expect((await runIntel(ws, 'sync')).report.intelligence.summary.written).toBe(2);
    rmSync(join(ws.root, '.kbsync'), { recursive: true, force: true });
    const before = await credits(api);
    const plan = await runIntel(ws, 'plan');
    expect(plan.stderr).toContain('intelligence entries already in the dataset: 2 adopted from its listing');
    expect(plan.report.intelligence.summary).toMatchObject({ written: 0, duplicate: 2, creditsPlanned: 0 });
    const sync = await runIntel(ws, 'sync');
    expect(sync.report.intelligence.summary).toMatchObject({ written: 0, creditsSpent: 0 });
    expect(await credits(api)).toBe(before);
  });

  it('query names a result that is an entry by the path the plan prints (source/file#key)', async () => {
    const { api, ws } = await setup({ plan: 'basic' });
    ws.write('a.md', '# Cooking\n\nPasta wants salted water.\n');
    writeKb(ws, 'faq.yaml', FAQ_YAML);
    expect((await runIntel(ws, 'sync')).code).toBe(0);
    const deadline = Date.now() + 20_000;
    while ((await entriesOf(api)).some((e) => e.status !== 'processed') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const r = await ws.run('query', '--json', 'When do we deploy? Tuesdays standup');
    expect(r.code, r.stderr).toBe(0);
    const results = (JSON.parse(r.stdout) as { results: { source: string | null; path: string | null; text: string }[] }).results;
    const top = results[0];
    expect(top?.text).toContain('On Tuesdays');
    expect(top).toMatchObject({ source: 'kb', path: 'kb/faq.yaml#1' });
  });

  it('reads an intelligence source from a git repository at its ref', async () => {
    for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
    try {
      const { api, agent, ws } = await setup({ plan: 'basic' });
      const origin = createGitOrigin(temp.make(), { 'faq/faq.yaml': FAQ_YAML, 'README.txt': 'not an entry' });
      ws.configure({ sources: [{ name: 'kb', git: { url: origin.bare, ref: 'main', subdir: 'faq' }, as: 'intelligence', agent }] });
      const r = await runIntel(ws, 'sync');
      expect(r.code, r.stderr).toBe(0);
      expect(r.report.intelligence.items.map((i) => [i.path, i.action])).toEqual([
        ['faq.yaml#1', 'write'],
        ['faq.yaml#2', 'write'],
      ]);
      expect(await entriesOf(api)).toHaveLength(2);
      origin.commit({ 'faq/faq.yaml': `${FAQ_YAML}\n- question: Where are the runbooks?\n  answer: In the ops repo.\n` }, 'one more');
      const again = await runIntel(ws, 'sync');
      expect(again.report.intelligence.summary).toMatchObject({ written: 1, unchanged: 2, creditsSpent: 1 });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reports a record it cannot read with its file, line and field, and writes the others', async () => {
    const { ws } = await setup({ plan: 'basic' });
    writeKb(ws, 'facts.jsonl', `${FACTS_JSONL}\n{"title": "no text"}\n`);
    const r = await runIntel(ws, 'sync');
    expect(r.code).toBe(1);
    const bad = r.report.intelligence.items.find((i) => i.action === 'invalid');
    expect(bad).toMatchObject({ path: 'facts.jsonl:3' });
    expect(bad?.reason).toContain('facts.jsonl:3: content: record 3: no "content" field');
    expect(r.report.intelligence.summary).toMatchObject({ written: 2, failed: 1 });
  });
});

describe('kbsync sync: intelligence writes whose answer is lost', () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await startFaultProxy(h.service.url);
  });
  afterAll(async () => {
    await proxy.close();
  });

  const isWrite = (r: ProxiedRequest): boolean => r.method === 'POST' && r.url.startsWith('/api/v2/ext/datasets/intelligence');

  it('a batch the service wrote but whose answer was lost is found in the listing by the next run: charged once, never sent again', async () => {
    const { api, ws } = await setup({ plan: 'pro' });
    ws.configure({ target: { kind: 'remote', baseUrl: proxy.url, apiKey: api.key, plan: 'pro' } });
    writeKb(ws, 'facts.jsonl', FACTS_JSONL);
    writeKb(ws, 'runbook.md', RUNBOOK_MD);
    let dropped = 0;
    proxy.setHooks({ onResponse: (req) => (isWrite(req) && dropped++ === 0 ? 'drop' : 'relay') });
    const before = await credits(api);
    const first = await runIntel(ws, 'sync');
    expect(first.code).toBe(1);
    expect(first.report.intelligence.items.filter((i) => i.outcome === 'unknown')).toHaveLength(4);
    // The service did write them (and charged): the state still holds the reservation, nothing is recorded as written.
    expect(before - (await credits(api))).toBe(4);
    expect(ledgerRows(ws, 'spend')).toHaveLength(0);

    const writesBefore = proxy.requests.filter(isWrite).length;
    const second = await runIntel(ws, 'sync');
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('unknown intelligence writes reconciled: 1 went through, 0 did not');
    expect(second.report.intelligence.summary).toMatchObject({ written: 0, unchanged: 4, creditsSpent: 0 });
    expect(proxy.requests.filter(isWrite).length).toBe(writesBefore);
    expect(before - (await credits(api))).toBe(4);
    expect(ledgerRows(ws, 'spend').map((r) => r.credits)).toEqual([4]);
    proxy.setHooks({});
  });

  it('a write that never reached the service is sent again with the same idempotency key, and charged once', async () => {
    const { api, ws } = await setup({ plan: 'basic' });
    ws.configure({ target: { kind: 'remote', baseUrl: proxy.url, apiKey: api.key, plan: 'basic' } });
    writeKb(ws, 'facts.jsonl', FACTS_JSONL.split('\n')[0] as string);
    let dropped = 0;
    proxy.setHooks({ onRequest: (req) => (isWrite(req) && dropped++ === 0 ? { kind: 'drop' } : { kind: 'forward' }) });
    const before = await credits(api);
    const first = await runIntel(ws, 'sync');
    expect(first.report.intelligence.items[0]?.outcome).toBe('unknown');
    expect(await entriesOf(api)).toHaveLength(0);

    const second = await runIntel(ws, 'sync');
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('unknown intelligence writes reconciled: 0 went through, 1 did not');
    expect(second.report.intelligence.summary).toMatchObject({ written: 1, creditsSpent: 1 });
    const keys = proxy.requests.filter(isWrite).map((r) => r.headers['idempotency-key']);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys.slice(-2)).size).toBe(1);
    expect(before - (await credits(api))).toBe(1);
    expect(await entriesOf(api)).toHaveLength(1);
    proxy.setHooks({});
  });

  it('a write left queued after a lost request is cancelled when its record changed meanwhile: nothing stays queued', async () => {
    const { api, ws } = await setup({ plan: 'basic' });
    ws.configure({ target: { kind: 'remote', baseUrl: proxy.url, apiKey: api.key, plan: 'basic' } });
    writeKb(ws, 'facts.jsonl', '{"content": "Old text."}');
    let dropped = 0;
    proxy.setHooks({ onRequest: (req) => (isWrite(req) && dropped++ === 0 ? { kind: 'drop' } : { kind: 'forward' }) });
    expect((await runIntel(ws, 'sync')).report.intelligence.items[0]?.outcome).toBe('unknown');
    writeKb(ws, 'facts.jsonl', '{"content": "New text."}');
    const second = await runIntel(ws, 'sync');
    expect(second.report.intelligence.summary).toMatchObject({ written: 1, creditsSpent: 1 });
    const status = JSON.parse((await ws.run('status', '--json')).stdout) as { outbox: { pending: number; unknown: number } };
    expect(status.outbox).toEqual({ pending: 0, unknown: 0 });
    expect((await entriesOf(api)).map((e) => e.sha256)).toEqual([second.report.intelligence.items[0]?.sha256]);
    proxy.setHooks({});
  });
});
