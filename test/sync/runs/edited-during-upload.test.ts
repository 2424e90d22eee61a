import { createHash } from 'node:crypto';
import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, itemOf, type Workspace } from '../../helpers/e2e-workspace.js';
import { isUpload, type ProxiedRequest } from '../../helpers/fault-proxy.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

/**
 * A file edited between the moment a sync hashed it and the moment its bytes reach the service: the
 * state must never claim the dataset holds content it does not, and no credit may be spent on
 * content that was not what was planned and priced.
 */

const suite = useE2eSuite({ proxy: true });

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const uploadNamed = (req: ProxiedRequest, name: string): boolean => isUpload(req) && req.body.includes(`filename="${name}"`);

function setup(): { ds: E2eDataset; ws: Workspace } {
  suite.proxy.setHooks({});
  const ds = suite.svc.dataset({ credits: 1000 });
  // One call at a time, smallest first: a.md is sent (and seen by the proxy) before b.md's upload starts.
  const ws = createWorkspace(suite.temp.make(), {
    baseUrl: suite.proxy.url,
    apiKey: ds.apiKey,
    config: { upload: { concurrency: 1, requestsPerSecond: 1000 } },
  });
  return { ds, ws };
}

describe('a file edited while a sync is under way', () => {
  it('edited after it was hashed, before its upload: not sent, not charged, reported deferred (exit 3); the next run uploads what it then holds', async () => {
    const { ds, ws } = setup();
    ws.write('a.md', '# A\n');
    ws.write('b.md', '# B\nthe first version\n');
    ws.write('c-copy.md', '# B\nthe first version\n'); // a duplicate of b.md's content, relying on its upload
    const before = await ds.balance();
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (uploadNamed(req, 'a.md')) {
          // Same size, other bytes, a later mtime: only the stat taken just before the upload can tell.
          ws.write('b.md', '# B\nthe other version\n'.slice(0, '# B\nthe first version\n'.length));
          const later = new Date(Date.now() + 60_000);
          utimesSync(join(ws.docs, 'b.md'), later, later);
        }
        return { kind: 'forward' };
      },
    });

    const first = await ws.runJson('sync');

    expect(first.code).toBe(3);
    expect(itemOf(first.report, 'a.md')).toMatchObject({ action: 'upload', outcome: 'done' });
    expect(itemOf(first.report, 'b.md')).toMatchObject({ action: 'defer:changing', outcome: 'not-run', credits: 0 });
    expect(itemOf(first.report, 'b.md').reason).toMatch(/changed after it was hashed/);
    expect(itemOf(first.report, 'c-copy.md')).toMatchObject({ action: 'skip:duplicate-content', outcome: 'not-run' });
    expect(itemOf(first.report, 'c-copy.md').reason).toMatch(
      /same content as b\.md, whose upload did not happen in this run \(not-run\); looked at again next run/,
    );
    expect(first.report.summary).toMatchObject({ uploaded: 1, deferred: 1, failed: 0, creditsSpent: 5 });
    expect(suite.proxy.requests.filter((r) => uploadNamed(r, 'b.md'))).toHaveLength(0);
    expect(before - (await ds.balance())).toBe(5);

    suite.proxy.setHooks({});
    const second = await ws.runJson('sync');

    expect(second.code).toBe(0);
    expect(itemOf(second.report, 'b.md')).toMatchObject({ action: 'upload', outcome: 'done' });
    // The first version is in no remote copy: its duplicate is uploaded now.
    expect(itemOf(second.report, 'c-copy.md')).toMatchObject({ action: 'upload', outcome: 'done' });
    expect(second.report.summary).toMatchObject({ uploaded: 2, creditsSpent: 10 });
    const files = await ds.files();
    expect(files.find((f) => f.name === 'b.md')?.sha256).toBe(
      sha256('# B\nthe other version\n'.slice(0, '# B\nthe first version\n'.length)),
    );
    expect(files.find((f) => f.name === 'c-copy.md')?.sha256).toBe(sha256('# B\nthe first version\n'));
    expect(before - (await ds.balance())).toBe(15);
  });

  it('edited in place during its upload (the service hashes other bytes): the state records what the service holds; the next run sends the file again, and a copy of the hashed content is not taken for a duplicate of it', async () => {
    const { ds, ws } = setup();
    const hashed = '# A\nalpha\n';
    const received = '# A\nALPHA\n';
    ws.write('a.md', hashed);
    suite.proxy.setHooks({
      onRequest: (req) => {
        // What an edit in place while the body streams looks like to the service: same length, other bytes.
        if (uploadNamed(req, 'a.md')) req.body = Buffer.from(req.body.toString('latin1').replace(hashed, received), 'latin1');
        return { kind: 'forward' };
      },
    });

    const first = await ws.runJson('sync');

    expect(first.code).toBe(0);
    expect((await ds.files()).map((f) => f.sha256)).toEqual([sha256(received)]);
    const state = openState(ws.statePath);
    try {
      const row = state.getTracked('docs', 'a.md');
      expect(row?.sha256).toBe(sha256(received));
      expect(row?.lastReason).toMatch(/the service received other content \(sha256 [0-9a-f]{8} -> [0-9a-f]{8}\)/);
    } finally {
      state.close();
    }

    // The file on disk still holds `hashed` (its stat unchanged); a second path holds the same content.
    suite.proxy.setHooks({});
    ws.write('copy.md', hashed);
    const before = await ds.balance();
    const second = await ws.runJson('sync');

    expect(second.code).toBe(0);
    expect(itemOf(second.report, 'a.md')).toMatchObject({ action: 'upload', outcome: 'done' });
    expect(itemOf(second.report, 'copy.md').action).not.toBe('skip:unchanged');
    expect(second.report.summary).toMatchObject({ uploaded: 1, creditsSpent: 5 });
    expect(before - (await ds.balance())).toBe(5);
    expect((await ds.files()).map((f) => f.sha256).sort()).toEqual([sha256(hashed), sha256(received)].sort());

    const third = await ws.runJson('sync');
    expect(third.report.summary).toMatchObject({ uploaded: 0, creditsSpent: 0 });
  });
});
