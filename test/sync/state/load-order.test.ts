import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BULK_SQL } from '../../../src/sync/state/sqlite/tracked.js';
import type { TrackedFileInput } from '../../../src/sync/state/index.js';
import { shaOf } from './fixtures/realistic.js';
import { tempState } from './fixtures/state-dir.js';

const file = (source: string, path: string, remoteName = path): TrackedFileInput => ({
  source,
  path,
  size: 1,
  mtimeNs: '1718000000123456789',
  inode: 7,
  sha256: shaOf(`${source}/${path}`),
  remoteName,
  remoteId: `r-${source}-${path}`,
  remoteStatus: 'processed',
  reprocessAttempts: 0,
  lastAction: 'upload',
  lastReason: 'new file',
});

describe('loadTrackedFiles order', () => {
  let t: ReturnType<typeof tempState> | undefined;
  afterEach(() => t?.cleanup());

  it('delivers files by source name, then path, whatever order they were written in (lookups by the observer and the join resume from the last answer on it)', () => {
    t = tempState();
    const store = t.open();
    // Source ids follow first use: "zeta" gets the smaller id, yet sorts after "alpha".
    store.upsertTrackedMany([
      file('zeta', 'b.md'),
      file('zeta', 'a/z.md'),
      file('alpha', 'y.md', 'alpha/y.md'),
      file('alpha', 'a-b.md'),
      file('zeta', 'a.md'),
    ]);

    const loaded = store.loadTrackedFiles();

    expect([...loaded.values()].map((f) => `${f.source}:${f.path}`)).toEqual([
      'alpha:a-b.md',
      'alpha:y.md',
      'zeta:a.md',
      'zeta:a/z.md',
      'zeta:b.md',
    ]);
    expect(loaded.find('alpha', 'y.md')?.remoteName).toBe('alpha/y.md');
    expect(loaded.get('zeta\0b.md')?.remoteId).toBe('r-zeta-b.md');
    store.close();
  });

  it('reads each source by a search of the primary key, which yields its paths in order (no sort, in SQL or in the index)', () => {
    t = tempState();
    t.open().close();
    const db = new Database(t.path, { readonly: true });
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${BULK_SQL}`).all(1) as { detail: string }[]).map((r) => r.detail);
      expect(plan).toEqual(['SEARCH files USING PRIMARY KEY (source_id=?)']);
    } finally {
      db.close();
    }
  });
});
