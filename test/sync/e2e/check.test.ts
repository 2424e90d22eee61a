import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckReport } from '../../../src/sync/report/format-check.js';
import type { Plan } from '../../../src/shared/plans.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { creditsOfDay } from '../../helpers/state-credits.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import type { ProxiedRequest } from '../../helpers/fault-proxy.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';
import { createClient } from '../../../src/client/index.js';
import { ensureDist } from '../../helpers/build-dist.js';

/**
 * `kbsync check --questions FILE`: each question is asked of the dataset (through the fault proxy, which
 * counts the calls), and its expected paths must come back in the top k; exit 1 on any failure.
 */

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 600_000 });

const isSingleQuery = (r: ProxiedRequest): boolean => r.method === 'POST' && /\/datasets\/query\/?(\?|$)/.test(r.url);
const isBatchQuery = (r: ProxiedRequest): boolean => r.method === 'POST' && /\/datasets\/query\/batch\/?(\?|$)/.test(r.url);

const DOCS: Record<string, string> = {
  'expenses.md':
    '# Expense approval\n\nExpense reports are approved by the finance controller within five working days. Receipts over fifty euros must be attached to each expense claim.\n',
  'vpn.md':
    '# VPN access\n\nThe WireGuard VPN gateway is vpn.example.net. Install the WireGuard client, import the tunnel profile from the IT portal and connect before opening the intranet.\n',
  'holidays.md':
    '# Holidays\n\nEvery employee has twenty-five days of annual leave. Leave requests go to the line manager in the HR calendar.\n',
};

const CHECKS = `# what the handbook must keep answering
- question: who approves expense reports and receipts
  expect: [expenses.md]
- question: how do I connect to the WireGuard VPN gateway
  expect: [vpn.md]
  topK: 3
`;

async function synced(o: { plan?: Plan } = {}): Promise<Workspace & { apiKey: string }> {
  suite.proxy.setHooks({});
  const ds = suite.svc.dataset({ plan: o.plan ?? 'basic', credits: 1000 });
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.proxy.url,
    apiKey: ds.apiKey,
    plan: o.plan ?? 'basic',
  });
  for (const [path, text] of Object.entries(DOCS)) ws.write(path, text);
  const sync = await ws.run('sync', '--wait', '--wait-timeout', '60');
  expect(sync.code, sync.stderr).toBe(0);
  writeFileSync(join(ws.root, 'checks.yaml'), CHECKS);
  suite.proxy.requests.length = 0;
  return Object.assign(ws, { apiKey: ds.apiKey });
}

/** `kbsync check --questions checks.yaml ARGS` (ARGS with '--json'), its stdout parsed. */
async function checkJson(ws: Workspace, ...args: string[]): Promise<{ code: number; stderr: string; report: CheckReport }> {
  const run = await ws.run('check', '--questions', 'checks.yaml', ...args);
  return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout) as CheckReport };
}

describe('kbsync check', () => {
  it('checks that pass exit 0 with the ranks found, one query (1 credit) each on a basic plan, recorded in the ledger; after a doc is removed and re-synced its check fails (exit 1)', async () => {
    const ws = await synced();
    const spentBefore = creditsOfDay(ws).spent;

    const pass = await checkJson(ws, '--json');

    expect(pass.code, pass.stderr).toBe(0);
    expect(pass.report.summary).toMatchObject({ checks: 2, passed: 2, failed: 0, calls: 2, batched: false, creditsSpent: 2 });
    expect(pass.report.checks.map((c) => [c.passed, c.topK, c.expected.map((e) => [e.expect, e.rank])])).toEqual([
      [true, 5, [['expenses.md', 1]]],
      [true, 3, [['vpn.md', 1]]],
    ]);
    expect(pass.report.checks[1]?.results[0]).toMatchObject({ rank: 1, copy: 'current', names: ['vpn.md'] });
    expect(suite.proxy.requests.filter(isSingleQuery)).toHaveLength(2);
    expect(suite.proxy.requests.filter(isBatchQuery)).toHaveLength(0);
    expect(JSON.parse(String(suite.proxy.requests.filter(isSingleQuery)[1]?.body))).toMatchObject({ top_k: 3 });
    expect(creditsOfDay(ws)).toEqual({ spent: spentBefore + 2, reserved: 0 });

    ws.remove('vpn.md');
    expect((await ws.run('sync')).code).toBe(0);
    const fail = await checkJson(ws, '--json');

    expect(fail.code).toBe(1);
    expect(fail.report.summary).toMatchObject({ checks: 2, passed: 1, failed: 1 });
    const vpn = fail.report.checks[1];
    expect(vpn?.passed).toBe(false);
    expect(vpn?.expected[0]).toMatchObject({ expect: 'vpn.md', rank: null, outdatedRanks: [1] });
    expect(vpn?.expected[0]?.note).toMatch(/only a copy of a file deleted locally came back, at rank 1/);
    expect(vpn?.results[0]).toMatchObject({ copy: 'deleted', names: ['vpn.md'] });
    expect(creditsOfDay(ws)).toEqual({ spent: spentBefore + 4, reserved: 0 });
  });

  it('prints a line per check with pass or FAIL and the ranks, the results of a failed check, and the credits', async () => {
    const ws = await synced();
    writeFileSync(
      join(ws.root, 'checks.yaml'),
      '- question: who approves expense reports\n  expect: [expenses.md]\n- question: who approves expense reports\n  expect: [holidays.md, ./expenses.md, docs/nothing-here.md]\n  topK: 1\n',
    );

    const run = await ws.run('check', '--questions', 'checks.yaml');

    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^pass {2}"who approves expense reports" +expenses\.md @1$/);
    expect(lines[1]).toMatch(
      /^FAIL {2}"who approves expense reports" +holidays\.md: not in the top 1; \.\/expenses\.md @1; docs\/nothing-here\.md: not in the top 1; no tracked file has this path/,
    );
    expect(lines[2]).toMatch(/^ {6}1\. expenses\.md {2}score \d\.\d{3}$/);
    expect(run.stdout).toMatch(/\n2 checks: 1 passed, 1 failed; 2 credits spent \(2 queries\)\n$/);
  });

  it('on an Advanced-tier plan the questions go as batch queries, one per top k (1 credit per question)', async () => {
    const ws = await synced({ plan: 'pro' });
    const spentBefore = creditsOfDay(ws).spent;
    writeFileSync(
      join(ws.root, 'checks.yaml'),
      `${CHECKS}- question: how many days of annual leave
  expect: [holidays.md]
`,
    );

    const run = await checkJson(ws, '--json', '--top-k', '4');

    expect(run.code, run.stderr).toBe(0);
    expect(run.report.summary).toMatchObject({ checks: 3, passed: 3, calls: 2, batched: true, creditsPlanned: 3, creditsSpent: 3 });
    const batches = suite.proxy.requests
      .filter(isBatchQuery)
      .map((r) => JSON.parse(String(r.body)) as { queries: string[]; top_k: number });
    expect(batches.map((b) => [b.top_k, b.queries.length]).sort()).toEqual([
      [3, 1],
      [4, 2],
    ]);
    expect(suite.proxy.requests.filter(isSingleQuery)).toHaveLength(0);
    expect(run.report.checks.map((c) => c.topK)).toEqual([4, 3, 4]);
    expect(creditsOfDay(ws)).toEqual({ spent: spentBefore + 3, reserved: 0 });
  });

  it('a batch whose answer is lost keeps its reservation (1 credit per question), and the next sync books it as spent', async () => {
    const ws = await synced({ plan: 'pro' });
    writeFileSync(
      join(ws.root, 'checks.yaml'),
      '- question: expense receipts\n  expect: [expenses.md]\n- question: VPN gateway\n  expect: [vpn.md]\n- question: annual leave\n  expect: [holidays.md]\n',
    );
    const before = creditsOfDay(ws);
    suite.proxy.setHooks({ onResponse: (req) => (isBatchQuery(req) ? 'drop' : 'relay') });

    const lost = await ws.run('check', '--questions', 'checks.yaml');
    suite.proxy.setHooks({});

    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/outcome unknown/);
    expect(suite.proxy.requests.filter(isBatchQuery)).toHaveLength(1);
    expect(creditsOfDay(ws)).toEqual({ spent: before.spent, reserved: 3 });

    expect((await ws.run('sync')).code).toBe(0);
    expect(creditsOfDay(ws)).toEqual({ spent: before.spent + 3, reserved: 0 });
    expect(suite.proxy.requests.filter(isBatchQuery)).toHaveLength(1);
  });

  it('over a budget cap nothing is sent (exit 3), and the message names the cap', async () => {
    const ws = await synced();
    ws.configure({ budget: { maxCreditsPerRun: 1, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 } });
    const spentBefore = creditsOfDay(ws).spent;

    const run = await ws.run('check', '--questions', 'checks.yaml');

    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/check not started: its 2 questions would exceed maxCreditsPerRun \(0 \+ 2 > 1\); nothing was sent/);
    expect(suite.proxy.requests.filter((r) => isSingleQuery(r) || isBatchQuery(r))).toHaveLength(0);
    expect(creditsOfDay(ws)).toEqual({ spent: spentBefore, reserved: 0 });

    ws.configure({ budget: { maxCreditsPerRun: 100_000, maxCreditsPerDay: spentBefore + 1, maxCreditsPerMonth: 100_000 } });
    const day = await ws.run('check', '--questions', 'checks.yaml');

    expect(day.code).toBe(3);
    expect(day.stderr).toMatch(new RegExp(`its 2 questions would exceed maxCreditsPerDay \\(${spentBefore} \\+ 2 > ${spentBefore + 1}\\)`));
    expect(suite.proxy.requests.filter((r) => isSingleQuery(r) || isBatchQuery(r))).toHaveLength(0);
  });

  it('a checks file with problems is refused (exit 2) naming the file, the line, the item index and the field; nothing is sent', async () => {
    const ws = await synced();
    writeFileSync(
      join(ws.root, 'bad-checks.yaml'),
      '- question: fine\n  expect: [a.md]\n- question: 42\n  expect: []\n- expect: [b.md]\n  topK: 50\n  note: x\n',
    );

    const run = await ws.run('check', '--questions', 'bad-checks.yaml');

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/bad-checks\.yaml:3: \[1\]\.question: a question \(text\) is required/);
    expect(run.stderr).toMatch(/bad-checks\.yaml:4: \[1\]\.expect: a list of at least one source path is required/);
    expect(run.stderr).toMatch(/bad-checks\.yaml:5: \[2\]\.question: a question \(text\) is required/);
    expect(run.stderr).toMatch(/bad-checks\.yaml:6: \[2\]\.topK: a whole number from 1 to 20/);
    expect(run.stderr).toMatch(/bad-checks\.yaml:\d: \[2\]: unknown field\(s\) note/);
    expect(suite.proxy.requests.filter((r) => isSingleQuery(r) || isBatchQuery(r))).toHaveLength(0);

    const missing = await ws.run('check', '--questions', 'no-such-checks.yaml');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--questions .*no-such-checks\.yaml: no such file/);
  });

  it('id:N expects a knowledge-source id: an intelligence entry written through the API is found by its id', async () => {
    const ws = await synced();
    const client = createClient({ baseUrl: suite.svc.url, apiKey: ws.apiKey });
    const agent = await client.createAgent({ name: 'faq' });
    const [dataset] = await client.listAgentDatasets(agent.id);
    await client.setDatasetMode(agent.id, String(dataset?.id), 'self_learning');
    const entry = await client.writeIntelligence({ agentId: agent.id, content: 'The office parrot is called Captain Turquoise.' });
    for (let i = 0; i < 100 && (await client.listIntelligence()).entries.find((e) => e.id === entry.id)?.status !== 'processed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await client.close();
    writeFileSync(join(ws.root, 'checks.yaml'), `- question: what is the parrot called\n  expect: ["id:${entry.id}"]\n  topK: 1\n`);

    const run = await checkJson(ws, '--json');

    expect(run.code, run.stderr).toBe(0);
    expect(run.report.checks[0]?.expected).toEqual([{ expect: `id:${entry.id}`, rank: 1, outdatedRanks: [], note: null }]);
    expect(run.report.checks[0]?.results[0]).toMatchObject({ id: entry.id, copy: 'unknown', names: [] });
  });

  it('the built CLI, from the workspace folder: exit 0 when every check passes, 1 when one fails', async () => {
    const ws = await synced();
    const pass = await spawnKbsync(['check', '--questions', 'checks.yaml', '-c', 'kbsync.yaml'], ws.root).exited;
    expect(pass.code, pass.stderr).toBe(0);
    expect(pass.stdout).toMatch(/^pass .*expenses\.md @1\npass .*vpn\.md @1\n/);

    writeFileSync(
      join(ws.root, 'checks.yaml'),
      '- question: how do I connect to the WireGuard VPN gateway\n  expect: [holidays.md]\n  topK: 1\n',
    );
    const fail = await spawnKbsync(['check', '--questions', 'checks.yaml', '-c', 'kbsync.yaml'], ws.root).exited;
    expect(fail.code).toBe(1);
    expect(fail.stdout).toMatch(/^FAIL .*holidays\.md: not in the top 1\n {6}1\. vpn\.md/);
  });
});
