import { describe, expect, it } from 'vitest';
import { uploadCost } from '../../../src/shared/plans.js';
import { createWorkspace, pathsWith, runKbsync } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();

/**
 * One file of each plain-text type the local service processes, and one over 5 MiB (so costs differ:
 * 5 + 2 credits). The other formats are tested against the service in test/service/file-formats.test.ts.
 */
const FILES: Record<string, string | Buffer> = {
  'README.md': '# Handbook\n\nWelcome to the team handbook.\n',
  'guides/setup.txt': 'Install the tools, then run the setup script.\n',
  'data/holidays.csv': 'date,name\n2025-01-01,New Year\n2025-12-25,Christmas\n',
  'data/glossary.json': '{"sla": "service level agreement", "oncall": "the person paged"}\n',
  'data/faq.jsonl': '{"q": "Where is the wiki?", "a": "On the intranet."}\n{"q": "Who approves expenses?", "a": "Your manager."}\n',
  'data/rota.tsv': 'week\tperson\n1\tAda\n2\tGrace\n',
  'big/manual.txt': Buffer.alloc(6 * 1_048_576 + 1, 'handbook manual line\n'),
};

describe('first and second sync', () => {
  it('uploads every supported file for exactly the planned credits, then uploads and spends nothing', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
    for (const [path, content] of Object.entries(FILES)) ws.write(path, content);
    ws.write('logo.png', 'not a document');
    const expectedCredits = Object.values(FILES).reduce((sum, c) => sum + uploadCost(Buffer.byteLength(c)), 0);
    const before = await ds.balance();

    const plan = await ws.runJson('plan');
    const first = await ws.runJson('sync');
    const afterFirst = await ds.balance();
    const remote = await ds.files();

    expect(plan.code).toBe(0);
    expect(plan.report.summary.creditsPlanned).toBe(expectedCredits);
    expect(await ds.balance()).toBe(afterFirst);
    expect(first.code).toBe(0);
    expect(pathsWith(first.report, 'upload')).toEqual(Object.keys(FILES).sort());
    expect(first.report.summary).toMatchObject({
      uploaded: 7,
      failed: 0,
      deferred: 0,
      creditsPlanned: expectedCredits,
      creditsSpent: expectedCredits,
    });
    expect(before - afterFirst).toBe(expectedCredits);
    expect(remote.map((f) => f.name).sort()).toEqual(Object.keys(FILES).sort());
    expect(
      first.report.items
        .filter((i) => i.action === 'upload')
        .map((i) => [i.path, i.credits])
        .sort(),
    ).toEqual(
      Object.entries(FILES)
        .map(([p, c]) => [p, uploadCost(Buffer.byteLength(c))])
        .sort(),
    );

    const second = await ws.runJson('sync');

    expect(second.code).toBe(0);
    expect(second.report.summary).toMatchObject({ uploaded: 0, unchanged: 7, creditsPlanned: 0, creditsSpent: 0 });
    expect(await ds.balance()).toBe(afterFirst);
    expect((await ds.files()).length).toBe(7);
  });

  it('draws no progress when stderr is not a terminal, and a bar redrawn in place (then erased) when it is', async () => {
    const ds = suite.svc.dataset({ credits: 1000 });
    const plain = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
    const tty = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: suite.svc.dataset({ credits: 1000 }).apiKey });
    for (const ws of [plain, tty]) {
      ws.write('a.md', '# A\n');
      ws.write('b.md', '# B\n');
    }

    const lines = await plain.run('sync');
    const bar = await runKbsync(['sync', '-c', tty.configPath], tty.root, { tty: true });

    expect(lines.code).toBe(0);
    // A CI log gets the report, not a line per upload.
    expect(lines.stderr).toBe('');
    expect(lines.stdout).toMatch(/2 uploaded, 0 unchanged/);
    expect(bar.code).toBe(0);
    expect(bar.stderr).toMatch(/\ruploading \[#+\] 2\/2 [ab]\.md\x1b\[K/);
    expect(bar.stderr.endsWith('\r\x1b[K')).toBe(true);
    expect(bar.stdout).toMatch(/2 uploaded/);
  });
});
