import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditReport } from '../../../src/sync/audit/compare.js';
import { openState } from '../../../src/sync/state/index.js';
import { junitSchemaErrors, parseJunit } from '../../helpers/ci-reports.js';
import { createWorkspace, runKbsync, type Workspace } from '../../helpers/e2e-workspace.js';
import { until } from '../../helpers/until.js';
import { apiFor, credits, newAgent, useHarness, type Api } from '../../service/helpers.js';

/*
 * `kbsync audit` with an intelligence source (`as: intelligence`), against the local service: entries the
 * state does not know, tracked entries missing remotely, records not written yet, entries left behind by
 * an edited or removed record (the API has no delete), and failed entries. Free: listings only. And the
 * sync's progress bar, which counts the entry writes.
 */

const { harness, temp } = useHarness();

async function setup(plan: 'basic' | 'pro' = 'basic'): Promise<{ api: Api; agent: number; ws: Workspace }> {
  const api = apiFor(harness(), { plan, credits: 1000 });
  const agent = await newAgent(api);
  const ws = createWorkspace(temp.make(), {
    baseUrl: harness().service.url,
    apiKey: api.key,
    plan,
    config: {
      sources: [
        { name: 'docs', path: './docs' },
        { name: 'kb', path: './kb', as: 'intelligence', agent: agent },
      ],
    },
  });
  mkdirSync(join(ws.root, 'kb'), { recursive: true });
  return { api, agent, ws };
}

const kb = (ws: Workspace, path: string, text: string): void => writeFileSync(join(ws.root, 'kb', path), text);

async function entryListing(api: Api): Promise<{ id: number; sha256: string; status: string }[]> {
  return (await api.call('GET', '/api/v2/ext/datasets/intelligence?limit=1000')).body.entries;
}

async function settled(api: Api): Promise<void> {
  await until('no entry pending', async () => !(await entryListing(api)).some((e) => e.status === 'pending'), 20_000);
}

const FACTS = ['{"content": "Backups run nightly at 02:00 UTC."}', '{"content": "The VPN needs a hardware key."}'].join('\n');
const FAQ = '- question: When do we deploy?\n  answer: On Tuesdays.\n';

describe('kbsync audit: intelligence entries', () => {
  it('reports entries unknown to the state, tracked entries missing remotely, records not written, entries left by an edited or removed record, and failed entries; free', async () => {
    const { api, agent, ws } = await setup();
    ws.write('a.md', '# A\n');
    kb(ws, 'facts.jsonl', FACTS);
    kb(ws, 'faq.yaml', FAQ);
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(0);
    await settled(api);
    const clean = JSON.parse((await ws.run('audit', '--json')).stdout) as AuditReport;
    expect(clean.items).toEqual([]);
    expect(clean.summary.entries).toEqual({ local: 3, tracked: 3, remote: 3 });

    // By hand, through the API: one entry the service fails to process (no text), one it keeps.
    const bad = await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agent, content: ' \n\n ' } });
    expect(bad.status, JSON.stringify(bad.body)).toBeLessThan(300);
    const hand = await api.call('POST', '/api/v2/ext/datasets/intelligence', { json: { agent_id: agent, content: 'Written with curl.' } });
    expect(hand.status).toBeLessThan(300);
    await settled(api);
    // A state that once tracked an entry this dataset does not have (another dataset's, say).
    const state = openState(ws.statePath);
    try {
      state.recordEntries([
        {
          sha256: 'ab'.repeat(32),
          agentId: String(agent),
          remoteId: '987654',
          status: 'processed',
          source: 'kb',
          path: 'old.jsonl#1',
          title: null,
        },
      ]);
    } finally {
      state.close();
    }
    // One record edited, one file removed, one record added: none synced.
    kb(ws, 'facts.jsonl', `${FACTS.replace('hardware key', 'hardware key and a PIN')}\n{"content": "Lunch is at noon."}`);
    rmSync(join(ws.root, 'kb', 'faq.yaml'));
    const balance = await credits(api);

    const run = await ws.run('audit', '--json', '--fail-on-drift');
    const audit = JSON.parse(run.stdout) as AuditReport;

    expect(run.code, run.stderr).toBe(1);
    expect(audit.items.map((i) => [i.kind, i.path])).toEqual([
      ['entry-untracked', null],
      ['entry-untracked', null],
      ['entry-missing-remote', 'kb/old.jsonl#1'],
      ['entry-not-written', 'kb/facts.jsonl#2'],
      ['entry-not-written', 'kb/facts.jsonl#3'],
      ['entry-edited', 'kb/facts.jsonl#2'],
      ['entry-removed', 'kb/faq.yaml#1'],
      ['entry-failed', null],
    ]);
    const [untrackedBad, untrackedHand, missing, , , edited, removed, failed] = audit.items;
    expect([untrackedBad?.remoteId, untrackedHand?.remoteId].sort()).toEqual([String(bad.body.id), String(hand.body.id)].sort());
    expect(untrackedHand?.detail).toMatch(/the state does not know this entry/);
    expect(missing).toMatchObject({
      remoteId: '987654',
      detail: "tracked as entry 987654, which the dataset's entry listing does not have",
    });
    expect(edited?.detail).toMatch(/^its record was edited since: the entry \(id \d+\) with the old content stays in the dataset/);
    expect(removed?.detail).toMatch(/^its record is gone from the source: the entry \(id \d+\) with the old content stays/);
    expect(failed).toMatchObject({ remoteId: String(bad.body.id), remoteStatus: 'failed' });
    expect(audit.summary.entries).toEqual({ local: 3, tracked: 4, remote: 5 });
    expect(audit.summary.byKind).toMatchObject({ 'entry-untracked': 2, 'entry-failed': 1, 'entry-edited': 1, 'entry-removed': 1 });
    expect(await credits(api)).toBe(balance);
    expect(await entryListing(api)).toHaveLength(5);

    const text = await ws.run('audit');
    expect(text.stdout).toMatch(/\n1 local file, 1 tracked, 1 remote file; 3 entry records, 4 tracked, 5 remote entries; 8 findings \(/);
    const junitRun = await ws.run('audit', '--junit', 'audit.xml');
    expect(junitRun.code).toBe(0);
    const xml = readFileSync(join(ws.root, 'audit.xml'), 'utf8');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    const junit = parseJunit(xml);
    expect(junit.suites.map((s) => [s.name, s.tests])).toEqual([
      ['entry-untracked', '2'],
      ['entry-missing-remote', '1'],
      ['entry-not-written', '2'],
      ['entry-edited', '1'],
      ['entry-removed', '1'],
      ['entry-failed', '1'],
    ]);
    expect(junit.cases.find((c) => c.suite === 'entry-failed')?.name).toBe(`entry ${bad.body.id}`);
  });
});

describe('the progress bar of a sync with intelligence sources', () => {
  it('counts the entry writes on a terminal: one step per entry below the Advanced tier, a batch moving it by its entries', async () => {
    const single = await setup('basic');
    kb(single.ws, 'facts.jsonl', `${FACTS}\n{"content": "Lunch is at noon."}`);
    const batch = await setup('pro');
    kb(batch.ws, 'facts.jsonl', `${FACTS}\n{"content": "Lunch is at noon."}`);
    const pipe = await setup('basic');
    kb(pipe.ws, 'facts.jsonl', `${FACTS}\n{"content": "Lunch is at noon."}`);

    const one = await runKbsync(['sync', '-c', single.ws.configPath], single.ws.root, { tty: true });
    const many = await runKbsync(['sync', '-c', batch.ws.configPath], batch.ws.root, { tty: true });
    const piped = await runKbsync(['sync', '-c', pipe.ws.configPath], pipe.ws.root);

    expect(one.code, one.stderr).toBe(0);
    expect(one.stderr).toMatch(/\rwriting +\[#+\] 3\/3 kb\/facts\.jsonl#\d/);
    expect(many.code, many.stderr).toBe(0);
    expect(many.stderr).toMatch(/\rwriting +\[#+\] 3\/3 3 entries/);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/entries: 3 written/);
    expect(piped.stderr).not.toMatch(/writing|\r|\x1b/);
  });
});
