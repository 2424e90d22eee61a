import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../../src/client/index.js';
import type { CheckReport } from '../../../src/sync/report/format-check.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { apiFor, useHarness } from '../../service/helpers.js';

/*
 * `kbsync check` with expected paths that are intelligence entries (`source/file#key`, `file#key`, or
 * an entry file for any of its entries), as `kbsync explain` takes them: through the CLI against the
 * local service, entries written by `kbsync sync` from a Markdown entry file.
 */

const { harness, temp } = useHarness();

const FAQ_MD = [
  '## Office parrot',
  '',
  'The office parrot is called Captain Turquoise and sits by the kitchen window.',
  '',
  '## Deploy days',
  '',
  'We deploy to production on Tuesdays, right after the standup meeting.',
  '',
].join('\n');

const PARROT = 'what is the office parrot called';
const CHECKS = [
  `- question: ${PARROT}\n  expect: [kb/faq.md#office-parrot]\n  topK: 1`,
  `- question: ${PARROT}\n  expect: [faq.md#office-parrot]\n  topK: 1`,
  '- question: on which day do we deploy to production\n  expect: [kb/faq.md]\n  topK: 1',
  `- question: ${PARROT}\n  expect: [kb/faq.md#deploy-days]\n  topK: 1`,
].join('\n');

/** A workspace with a folder source and an intelligence source, synced, its two entries processed by the service. */
async function synced(): Promise<Workspace> {
  const api = apiFor(harness(), { plan: 'basic', credits: 1000 });
  const client = createClient({ baseUrl: harness().service.url, apiKey: api.key });
  const agent = await client.createAgent({ name: 'faq' });
  await client.setDatasetMode(agent.id, api.datasetId, 'self_learning');
  const ws = createWorkspace(temp.make(), {
    baseUrl: harness().service.url,
    apiKey: api.key,
    plan: 'basic',
    config: {
      sources: [
        { name: 'docs', path: './docs' },
        { name: 'kb', path: './kb', as: 'intelligence', agent: agent.id },
      ],
    },
  });
  ws.write('vpn.md', '# VPN\n\nThe WireGuard VPN gateway is vpn.example.net; import the tunnel profile first.\n');
  mkdirSync(join(ws.root, 'kb'), { recursive: true });
  writeFileSync(join(ws.root, 'kb', 'faq.md'), FAQ_MD);
  const sync = await ws.run('sync', '--wait', '--wait-timeout', '60');
  expect(sync.code, sync.stderr).toBe(0);
  for (let i = 0; i < 200; i++) {
    const { entries } = await client.listIntelligence();
    if (entries.length === 2 && entries.every((e) => e.status === 'processed')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await client.close();
  writeFileSync(join(ws.root, 'checks.yaml'), `${CHECKS}\n`);
  return ws;
}

async function checkJson(ws: Workspace): Promise<{ code: number; stderr: string; report: CheckReport }> {
  const run = await ws.run('check', '--questions', 'checks.yaml', '--json');
  return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout) as CheckReport };
}

describe('kbsync check: an expected path that is an intelligence entry', () => {
  it('matches source/file#key, file#key and the entry file; names entry results; a changed record leaves only a stale entry (fails)', async () => {
    const ws = await synced();

    const run = await checkJson(ws);

    expect(run.code, run.stderr).toBe(1);
    expect(run.report.checks.map((c) => [c.passed, c.expected.map((e) => [e.expect, e.rank, e.note])])).toEqual([
      [true, [['kb/faq.md#office-parrot', 1, null]]],
      [true, [['faq.md#office-parrot', 1, null]]],
      [true, [['kb/faq.md', 1, null]]],
      [false, [['kb/faq.md#deploy-days', null, 'not in the top 1']]],
    ]);
    expect(run.report.checks[0]?.results[0]).toMatchObject({ rank: 1, copy: 'current', names: ['kb/faq.md#office-parrot'] });
    expect(run.report.checks[2]?.results[0]).toMatchObject({ rank: 1, copy: 'current', names: ['kb/faq.md#deploy-days'] });

    const text = await ws.run('check', '--questions', 'checks.yaml');
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^FAIL .*kb\/faq\.md#deploy-days: not in the top 1\n {6}1\. kb\/faq\.md#office-parrot/m);

    // The record changes, not synced: the dataset's entry is an older content of it, which does not count.
    writeFileSync(join(ws.root, 'kb', 'faq.md'), FAQ_MD.replace('Captain Turquoise', 'Admiral Teal'));
    const stale = await checkJson(ws);
    expect(stale.report.checks[0]?.passed).toBe(false);
    expect(stale.report.checks[0]?.expected[0]).toMatchObject({ rank: null, outdatedRanks: [1] });
    expect(stale.report.checks[0]?.expected[0]?.note).toMatch(/^only a stale older copy .* at rank 1$/);
    expect(stale.report.checks[0]?.results[0]).toMatchObject({ copy: 'stale', names: ['kb/faq.md#office-parrot'] });
    // The other entry's content is unchanged: still current, still found through its file.
    expect(stale.report.checks[2]?.passed).toBe(true);
  });
});
