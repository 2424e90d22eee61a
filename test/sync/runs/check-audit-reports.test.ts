import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../../src/client/index.js';
import type { AuditReport } from '../../../src/sync/audit/compare.js';
import type { CheckReport } from '../../../src/sync/report/format-check.js';
import { junitSchemaErrors, parseJunit, parseMarkdown } from '../../helpers/ci-reports.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace, runKbsync, type Workspace } from '../../helpers/e2e-workspace.js';
import { until } from '../../helpers/until.js';

/**
 * `kbsync check` and `kbsync audit` with `--report-md FILE` and `--junit FILE`, against the local
 * service: the reports read back (Markdown with marked, JUnit with an XML parser) and the JUnit
 * validated against test/fixtures/junit/junit.xsd.
 */

const suite = useE2eSuite({ timeoutMs: 600_000 });
const CORRUPT_DOCX = join(import.meta.dirname, '../../fixtures/real/docx/corrupt/tables.truncated.docx');

const DOCS: Record<string, string> = {
  'expenses.md':
    '# Expense approval\n\nExpense reports are approved by the finance controller within five working days. Receipts over fifty euros must be attached to each expense claim.\n',
  'vpn.md':
    '# VPN access\n\nThe WireGuard VPN gateway is vpn.example.net. Install the WireGuard client, import the tunnel profile from the IT portal and connect before opening the intranet.\n',
};

const CHECKS = `- question: who approves expense reports and receipts
  expect: [expenses.md]
- question: how do I connect to the WireGuard VPN gateway
  expect: [vpn.md]
  topK: 3
`;

async function synced(): Promise<{ ws: Workspace; balance: () => Promise<number>; apiKey: string }> {
  const ds = suite.svc.dataset({ credits: 1000 });
  const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
  for (const [path, text] of Object.entries(DOCS)) ws.write(path, text);
  const sync = await ws.run('sync', '--wait', '--wait-timeout', '60');
  expect(sync.code, sync.stderr).toBe(0);
  writeFileSync(join(ws.root, 'checks.yaml'), CHECKS);
  return { ws, balance: () => ds.balance(), apiKey: ds.apiKey };
}

const read = (ws: Workspace, path: string): string => readFileSync(join(ws.root, path), 'utf8');

describe('kbsync check --report-md and --junit', () => {
  it('check --report-md FILE --junit FILE: one JUnit case per check, a failing check a failed case with the ranks found and what came back instead; the Markdown has the counts and credits, and is appended to $GITHUB_STEP_SUMMARY', async () => {
    const { ws, balance } = await synced();
    ws.remove('vpn.md');
    expect((await ws.run('sync')).code).toBe(0);
    const summary = join(ws.root, 'step-summary.md');
    writeFileSync(summary, '## kbsync sync\n\nNo failures.\n');
    const json = await ws.run('check', '--questions', 'checks.yaml', '--json');
    const report = JSON.parse(json.stdout) as CheckReport;
    expect(report.summary).toMatchObject({ checks: 2, passed: 1, failed: 1, creditsSpent: 2 });

    const run = await runKbsync(
      ['check', '--questions', 'checks.yaml', '-c', ws.configPath, '--report-md', 'out/check.md', '--junit', 'out/check.xml'],
      ws.root,
      { env: { GITHUB_STEP_SUMMARY: summary } },
    );

    expect(run.code).toBe(1);
    const xml = read(ws, 'out/check.xml');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    const junit = parseJunit(xml);
    expect(junit.root).toMatchObject({ name: 'kbsync check', tests: '2', failures: '1', errors: '0' });
    expect(junit.suites.map((s) => [s.name, s.tests, s.failures])).toEqual([['check', '2', '1']]);
    expect(junit.cases.map((c) => [c.name, c.outcome])).toEqual([
      ['who approves expense reports and receipts', 'passed'],
      ['how do I connect to the WireGuard VPN gateway', 'failure'],
    ]);
    expect(junit.cases[0]?.systemOut).toBe('line 1, top 5: expenses.md @1');
    expect(junit.cases[1]?.message).toMatch(
      /^line 3, top 3: vpn\.md: .*only a copy of a file deleted locally came back, at rank 1.*; came back instead: 1\. vpn\.md \(deleted copy\)(, 2\. .+)?$/,
    );
    const md = parseMarkdown(read(ws, 'out/check.md'));
    expect(md.headings).toEqual(['kbsync check', 'Failures (1)']);
    expect(md.tables[0]).toEqual({ header: ['checks', 'passed', 'failed', 'queries'], rows: [['2', '1', '1', '2']] });
    expect(md.tables[1]).toEqual({ header: ['credits spent', 'reserved', 'left'], rows: [['2', '0', String(await balance())]] });
    expect(md.list).toEqual(['checks file: checks.yaml']);
    expect(md.tables[2]?.rows.map((r) => r.slice(0, 2))).toEqual([['how do I connect to the WireGuard VPN gateway', 'failed']]);
    expect(readFileSync(summary, 'utf8')).toBe(`## kbsync sync\n\nNo failures.\n\n${read(ws, 'out/check.md')}`);
  });

  it('a check report that cannot be written stops check before any question is asked (exit 2, nothing charged)', async () => {
    const { ws, balance } = await synced();
    writeFileSync(join(ws.root, 'a-file'), '');
    const before = await balance();

    const run = await ws.run('check', '--questions', 'checks.yaml', '--report-md', 'a-file/check.md');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--report-md: cannot write ${join(ws.root, 'a-file/check.md')}`);
    expect(await balance()).toBe(before);
  });
});

describe('kbsync audit --report-md and --junit', () => {
  it('audit --report-md FILE --junit FILE: each finding a failed case in a suite per drift kind; the Markdown counts the findings and spends no credit', async () => {
    const { ws, balance, apiKey } = await synced();
    copyFileSync(CORRUPT_DOCX, join(ws.docs, 'report.docx'));
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(1);
    const handmade = join(ws.root, 'handmade.md');
    writeFileSync(handmade, '# Handmade\nUploaded with curl.\n');
    const client = createClient({ baseUrl: suite.svc.url, apiKey });
    const uploaded = await client.uploadFile({ path: handmade, name: 'handmade.md' });
    await client.close();
    ws.remove('vpn.md');
    const before = await balance();
    // The hand-made upload is processed in the background: audit once it has been, or the first audit may
    // list it as still processing (not a drift, so not in the CI reports) and the second not.
    const json = await until(
      'the hand-made upload processed',
      async () => {
        const report = JSON.parse((await ws.run('audit', '--json')).stdout) as AuditReport;
        return !report.items.some((i) => i.kind === 'processing') && report;
      },
      20_000,
    );

    const run = await ws.run('audit', '--fail-on-drift', '--report-md', 'audit.md', '--junit', 'audit.xml');

    expect(run.code).toBe(1);
    expect(await balance()).toBe(before);
    const xml = read(ws, 'audit.xml');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    const junit = parseJunit(xml);
    expect(junit.root).toMatchObject({ name: 'kbsync audit', tests: '3', failures: '3' });
    expect(junit.suites.map((s) => [s.name, s.tests, s.failures])).toEqual([
      ['remote-untracked', '1', '1'],
      ['deleted-remains', '1', '1'],
      ['failed', '1', '1'],
    ]);
    expect(junit.cases.map((c) => [c.suite, c.name, c.outcome])).toEqual([
      ['remote-untracked', `remote handmade.md (id ${uploaded.id})`, 'failure'],
      ['deleted-remains', 'vpn.md', 'failure'],
      ['failed', 'report.docx', 'failure'],
    ]);
    expect(junit.cases.map((c) => c.message)).toEqual(json.items.map((i) => i.detail));
    const md = parseMarkdown(read(ws, 'audit.md'));
    expect(md.headings).toEqual(['kbsync audit', 'Failures (3)']);
    expect(md.tables[0]).toEqual({
      header: ['local', 'tracked', 'remote', 'drift', 'remote-untracked', 'deleted-remains', 'failed'],
      rows: [['2', '3', '4', '3', '1', '1', '1']],
    });
    expect(md.tables[1]).toEqual({ header: ['credits spent', 'reserved', 'left'], rows: [['0', '0', String(before)]] });
    expect(md.list).toEqual(['free: listings only, no credits spent']);
    expect(md.tables[2]?.header).toEqual(['suite', 'name', 'status', 'message']);
  });

  it('a clean audit is one passed case that says what was compared', async () => {
    const { ws } = await synced();

    const run = await ws.run('audit', '--junit', 'audit.xml', '--report-md', 'audit.md');

    expect(run.code).toBe(0);
    const xml = read(ws, 'audit.xml');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    const junit = parseJunit(xml);
    expect(junit.cases).toEqual([
      expect.objectContaining({ suite: 'audit', name: 'no drift', outcome: 'passed', systemOut: 'no drift: 2 local, 2 tracked, 2 remote' }),
    ]);
    expect(parseMarkdown(read(ws, 'audit.md')).headings).toEqual(['kbsync audit']);
  });
});
