import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../../src/client/index.js';
import type { AuditReport } from '../../../src/sync/audit/compare.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';

/**
 * `kbsync audit`: the walk, the state and the remote listing compared. The service is reached through
 * the fault proxy, which shows that the audit makes GET requests only.
 */

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 600_000 });
const CORRUPT_DOCX = join(import.meta.dirname, '../../fixtures/real/docx/corrupt/tables.truncated.docx');

/** `kbsync audit ARGS` (ARGS with '--json'), its stdout parsed. */
async function auditJson(ws: Workspace, ...args: string[]): Promise<{ code: number; stderr: string; report: AuditReport }> {
  const run = await ws.run('audit', ...args);
  return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout) as AuditReport };
}

/** The findings as [kind, path or remote name] pairs, in report order. */
const findings = (r: AuditReport): [string, string | null][] => r.items.map((i) => [i.kind, i.path ?? i.remoteName]);

describe('kbsync audit', () => {
  it('reports a hand-uploaded file, a deleted source file, a stale copy, a changed-but-not-synced file and a failed file; free (GETs only); exit 1 only with --fail-on-drift', async () => {
    suite.proxy.setHooks({});
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.proxy.url, apiKey: ds.apiKey });
    ws.write('keep.md', '# Keep\nUnchanged all along.\n');
    ws.write('gone.md', '# Gone\nDeleted later.\n');
    ws.write('edited.md', '# Edited\nFirst version.\n');
    ws.write('resynced.md', '# Resynced\nFirst version.\n');
    copyFileSync(CORRUPT_DOCX, join(ws.docs, 'report.docx'));
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(1);

    // Uploaded by hand, straight through the API: the state never heard of it.
    const handmade = join(ws.root, 'handmade.md');
    writeFileSync(handmade, '# Handmade\nUploaded with curl.\n');
    const client = createClient({ baseUrl: suite.svc.url, apiKey: ds.apiKey });
    const uploaded = await client.uploadFile({ path: handmade, name: 'handmade.md' });
    await client.close();

    ws.remove('gone.md');
    ws.write('resynced.md', '# Resynced\nSecond version, synced.\n');
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(1);
    ws.write('edited.md', '# Edited\nSecond version, not synced.\n');

    const balance = await ds.balance();
    suite.proxy.requests.length = 0;
    const audit = await auditJson(ws, '--json');

    expect(audit.code, audit.stderr).toBe(0);
    expect(findings(audit.report)).toEqual([
      ['remote-untracked', 'handmade.md'],
      ['changed', 'edited.md'],
      ['stale-copy', 'resynced.md'],
      ['deleted-remains', 'gone.md'],
      ['failed', 'report.docx'],
    ]);
    const [untracked, changed, stale, deleted, failed] = audit.report.items;
    expect(untracked).toMatchObject({ path: null, remoteId: uploaded.id, remoteName: 'handmade.md' });
    expect(untracked?.detail).toMatch(/the state does not know this file/);
    expect(changed?.detail).toMatch(/changed locally since its upload \(sha256 [0-9a-f]{8} -> [0-9a-f]{8}\)/);
    expect(stale?.detail).toMatch(/an older copy of resynced\.md, uploaded again since/);
    expect(deleted?.detail).toMatch(/deleted locally; its remote copy \(id \d+\) remains/);
    expect(failed).toMatchObject({ remoteStatus: 'failed' });
    expect(failed?.error).toMatch(/^parse_failed: not a valid DOCX file/);
    expect(audit.report.summary).toMatchObject({ local: 4, tracked: 4, trackedDeleted: 1, remote: 7, drift: 5 });
    expect(audit.report.summary.byKind).toMatchObject({
      'remote-untracked': 1,
      changed: 1,
      'stale-copy': 1,
      'deleted-remains': 1,
      failed: 1,
    });
    expect(suite.proxy.requests.length).toBeGreaterThan(0);
    expect(suite.proxy.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await ds.balance()).toBe(balance);

    const failing = await ws.run('audit', '--fail-on-drift');
    expect(failing.code).toBe(1);
    const lines = failing.stdout.split('\n');
    expect(lines[0]).toMatch(/^remote-untracked {2}handmade\.md +#\d+ {2}the state does not know this file/);
    expect(lines[1]).toMatch(/^changed +edited\.md +#\d+ {2}changed locally since its upload/);
    expect(lines[4]).toMatch(/^failed +report\.docx +#\d+ {2}the service failed to process it: parse_failed: not a valid DOCX file/);
    expect(failing.stdout).toMatch(
      /\n4 local files, 4 tracked, 1 deleted locally \(remote copies kept\), 7 remote files; 5 findings \(1 remote-untracked, 1 changed, 1 stale-copy, 1 deleted-remains, 1 failed\)\n$/,
    );
  });

  it('an audit of a dataset in step finds nothing: exit 0 with --fail-on-drift too (built CLI, from the workspace folder)', async () => {
    suite.proxy.setHooks({});
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
    ws.write('a.md', '# A\n');
    ws.write('sub/b.txt', 'B\n');
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(0);

    const clean = await spawnKbsync(['audit', '--fail-on-drift', '-c', 'kbsync.yaml'], ws.root).exited;

    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toBe(
      'no drift: the dataset holds exactly the tracked copies of the local files\n\n2 local files, 2 tracked, 2 remote files; 0 findings\n',
    );

    ws.write('c.md', '# C\n');
    const drift = await spawnKbsync(['audit', '--fail-on-drift', '-c', 'kbsync.yaml'], ws.root).exited;
    expect(drift.code).toBe(1);
    expect(drift.stdout).toMatch(/^not-uploaded {2}c\.md {2}- {2}not in the dataset yet \(a sync uploads it\)\n/);
  });

  it('a copy the listing shows stuck processing is reported with how long ago it last changed', async () => {
    suite.proxy.setHooks({});
    const ds = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.proxy.url, apiKey: ds.apiKey });
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\n');
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(0);
    // The service's listing, as it would read with b.md stuck in processing for two hours.
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
    suite.proxy.setHooks({
      onResponse: (req, res) => {
        if (req.method !== 'GET' || !/\/files\/?(\?|$)/.test(req.url) || res.status !== 200) return 'relay';
        const listing = JSON.parse(res.body.toString()) as { files: { name: string; status: string; updated_at: string }[] };
        for (const f of listing.files) if (f.name === 'b.md') Object.assign(f, { status: 'processing', updated_at: twoHoursAgo });
        res.body = Buffer.from(JSON.stringify(listing));
        return 'relay';
      },
    });

    const audit = await auditJson(ws, '--json');
    suite.proxy.setHooks({});

    expect(findings(audit.report)).toEqual([['processing', 'b.md']]);
    expect(audit.report.items[0]).toMatchObject({ remoteStatus: 'processing', detail: 'still processing, last changed 2 h ago' });
  });

  it("a state from another dataset (the config pointed elsewhere): its tracked files are missing remotely, and the new dataset's files unknown to it", async () => {
    suite.proxy.setHooks({});
    const first = suite.svc.dataset({ credits: 1000 });
    const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: first.apiKey });
    ws.write('a.md', '# A\n');
    expect((await ws.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(0);
    const second = suite.svc.dataset({ credits: 1000 });
    const other = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: second.apiKey });
    other.write('x.md', '# X\n');
    expect((await other.run('sync', '--wait', '--wait-timeout', '60')).code).toBe(0);

    ws.configure({ target: { kind: 'remote', baseUrl: suite.svc.url, apiKey: second.apiKey, plan: 'basic' } });
    const audit = await auditJson(ws, '--json');

    expect(findings(audit.report)).toEqual([
      ['remote-untracked', 'x.md'],
      ['missing-remote', 'a.md'],
    ]);
    expect(audit.report.items[1]?.detail).toMatch(/tracked as remote id \d+, which the dataset does not list/);
  });
});
