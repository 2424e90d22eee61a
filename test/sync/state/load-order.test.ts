import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BULK_CHUNK_FILES, BULK_SQL } from '../../../src/sync/state/sqlite/tracked-bulk.js';
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

  it('reads a source of more files than a chunk holds whole and in order, a path holding the separator in a later chunk too', () => {
    t = tempState();
    const store = t.open();
    const n = BULK_CHUNK_FILES + 3;
    const paths = Array.from({ length: n }, (_, i) => `d/${String(i).padStart(6, '0')}.md`);
    paths[BULK_CHUNK_FILES + 1] = `d/${String(BULK_CHUNK_FILES + 1).padStart(6, '0')}\0odd.md`;
    store.upsertTrackedMany([...paths.map((p) => file('docs', p)), file('wiki', 'a.md')]);

    const loaded = store.loadTrackedFiles();

    expect(loaded.size).toBe(n + 1);
    expect([...loaded.keys()]).toEqual([...paths.map((p) => `docs\0${p}`), 'wiki\0a.md']);
    const last = loaded.find('docs', paths[n - 1] as string);
    expect([last?.sha256, last?.mtimeNs, last?.remoteId]).toEqual([
      shaOf(`docs/${paths[n - 1]}`),
      '1718000000123456789',
      `r-docs-${paths[n - 1]}`,
    ]);
    store.close();
  });

  it('reads each source by a search of the primary key, which yields its paths in order (no sort, in SQL or in the index)', () => {
    t = tempState();
    t.open().close();
    const db = new Database(t.path, { readonly: true });
    try {
      const planOf = (sql: string, ...args: unknown[]): string[] =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail);
      // The chunk's rows stream through a co-routine into the aggregates: no temp b-tree, no copy.
      expect(planOf(BULK_SQL.first, 1)).toEqual([
        'CO-ROUTINE (subquery-1)',
        'SEARCH files USING PRIMARY KEY (source_id=?)',
        'SCAN (subquery-1)',
      ]);
      expect(planOf(BULK_SQL.after, 1, 'a.md')).toEqual([
        'CO-ROUTINE (subquery-1)',
        'SEARCH files USING PRIMARY KEY (source_id=? AND path>?)',
        'SCAN (subquery-1)',
      ]);
    } finally {
      db.close();
    }
  });
});
