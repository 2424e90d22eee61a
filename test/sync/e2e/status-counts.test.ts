import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';
import type { AuditReport } from '../../../src/sync/audit/compare.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });

describe('kbsync status: what it counts', () => {
  it('a file deleted locally is not counted as tracked but named apart', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: {} });
    for (let i = 0; i < 3; i++) ws.write(`f${i}.md`, `# ${i}\n`);
    expect((await ws.run('sync')).code).toBe(0);
    ws.remove('f2.md');
    expect((await ws.run('sync')).code).toBe(0);

    const text = await ws.run('status');
    const json = await ws.runJson('status');
    expect(text.code).toBe(0);
    const tracked = (json.report as unknown as { tracked: { files: number; deleted: number; byRemoteStatus: Record<string, number> } })
      .tracked;
    expect(tracked).toMatchObject({ files: 2, deleted: 1 });
    expect(Object.values(tracked.byRemoteStatus).reduce((a, b) => a + b, 0)).toBe(2);
    expect(text.stdout).toMatch(/^tracked: +2 files \([^)]*\); 1 deleted locally \(remote copies kept\)$/m);
    // Every count in one format: 100,000 credits, not 100000.
    expect(text.stdout).toMatch(/^credits today: +15 of 100,000 /m);
  });

  it("--json gives each file's remote chunk count as the service listed it, and their total over the files in their source", async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: {} });
    ws.write('short.md', '# Short\n\nOne line.\n');
    // Many sections: the service cuts it into several chunks.
    ws.write('long.md', Array.from({ length: 40 }, (_, i) => `# Part ${i}\n\n${`Words about part ${i}. `.repeat(30)}`).join('\n\n'));
    ws.write('gone.md', '# Gone\n');
    expect((await ws.run('sync', '--wait')).code).toBe(0);
    ws.remove('gone.md');
    expect((await ws.run('sync')).code).toBe(0);

    const listed = new Map((await ds.files()).map((f) => [String(f.id), f.chunk_count]));
    const { report } = await ws.runJson('status');
    const { items, tracked } = report as unknown as {
      items: { path: string; action: string; remoteId: string; remoteChunks: number | null }[];
      tracked: { chunks: number };
    };
    const chunks = Object.fromEntries(items.map((i) => [i.path, i.remoteChunks]));
    expect(Object.keys(chunks).sort()).toEqual(['gone.md', 'long.md', 'short.md']);
    for (const i of items) expect([i.path, i.remoteChunks]).toEqual([i.path, listed.get(i.remoteId)]);
    expect(chunks['long.md']).toBeGreaterThan(chunks['short.md'] as number);
    expect(chunks['short.md']).toBeGreaterThanOrEqual(1);
    // The file deleted locally keeps its copy's count, but is not in the total.
    expect(tracked.chunks).toBe((chunks['long.md'] as number) + (chunks['short.md'] as number));
  });

  it('status and audit of one state count the same tracked files, and the same deleted ones apart (bin/kbsync.js)', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: {} });
    for (let i = 0; i < 3; i++) ws.write(`f${i}.md`, `# ${i}\n`);
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(0);
    ws.remove('f2.md');
    expect((await ws.run('sync')).code).toBe(0);
    const cli = async (...args: string[]) => {
      const run = await spawnKbsync([...args, '-c', ws.configPath], ws.root).exited;
      expect(run.code, run.stderr).toBe(0);
      return run.stdout;
    };

    const status = JSON.parse(await cli('status', '--json')) as { tracked: { files: number; deleted: number } };
    const audit = JSON.parse(await cli('audit', '--json')) as AuditReport;
    const statusText = await cli('status');
    const auditText = await cli('audit');

    expect(status.tracked).toMatchObject({ files: 2, deleted: 1 });
    expect(audit.summary).toMatchObject({ local: 2, tracked: 2, trackedDeleted: 1, remote: 3 });
    expect(statusText).toMatch(/^tracked: +2 files \([^)]*\); 1 deleted locally \(remote copies kept\)$/m);
    expect(auditText).toMatch(/^2 local files, 2 tracked, 1 deleted locally \(remote copies kept\), 3 remote files; 1 finding /m);
  });
});
