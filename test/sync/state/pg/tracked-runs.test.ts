import { afterEach, describe, expect, it } from 'vitest';
import { openState, type StateStore, type TrackedFileInput } from '../../../../src/sync/state/index.js';
import { CHUNK_ROWS } from '../../../../src/sync/state/pg/tracked.js';
import { freshDatabase } from '../../../helpers/postgres.js';
import { tempState } from '../fixtures/state-dir.js';

/**
 * The PostgreSQL state reads a source's tracked files in runs of CHUNK_ROWS (each split on the main
 * thread while the worker reads the next): a state of several runs loads as the SQLite state loads
 * the same rows, every row once, in order, with the failed copies' reasons of every run.
 */
const sha = (n: number): string => n.toString(16).padStart(64, '0');
const row = (source: string, i: number, path = `dir${i % 7}/f${String(i).padStart(6, '0')}.md`): TrackedFileInput => ({
  source,
  path,
  size: i,
  mtimeNs: `1700000000${i}`,
  inode: i + 1,
  sha256: sha(i),
  // A remote name as the path (stored as NULL), as the source and path (stored as "/"), or another.
  remoteName: i % 5 === 0 ? `${source}/${path}` : i % 5 === 1 ? `other/${path}` : path,
  remoteId: i % 3 === 0 ? null : `id-${i}`,
  remoteStatus: i % 3 === 0 ? null : 'processed',
  reprocessAttempts: 0,
  lastAction: i % 11 === 0 ? 'deleted' : 'upload',
  lastReason: 'new file',
});

/** What a load holds, row by row (the core columns and the reason of a failed copy). */
function loaded(store: StateStore): unknown[] {
  return [...store.loadTrackedFiles().values()].map((f) => [
    f.source,
    f.path,
    f.size,
    f.mtimeNs,
    f.inode,
    f.sha256,
    f.remoteName,
    f.remoteId,
    f.remoteStatus,
    f.lastAction,
    f.remoteError ?? null,
  ]);
}

describe('the PostgreSQL state read in runs', () => {
  const stores: StateStore[] = [];
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
    for (const c of cleanups.splice(0)) c();
  });

  async function both(rows: TrackedFileInput[], failed: Map<string, string>): Promise<[unknown[], unknown[]]> {
    const t = tempState();
    cleanups.push(t.cleanup);
    const sqlite = openState(t.path, { scope: 'big,small' });
    const postgres = openState(await freshDatabase('runs'), { scope: 'big,small' });
    stores.push(sqlite, postgres);
    for (const store of [sqlite, postgres]) {
      for (let i = 0; i < rows.length; i += 10_000) store.upsertTrackedMany(rows.slice(i, i + 10_000));
      store.recordListing([...failed].map(([id, error]) => ({ id, status: 'failed', error, chunkCount: null })));
    }
    return [loaded(postgres), loaded(sqlite)];
  }

  it('loads a source of several runs as the SQLite state does, with the reasons of failed copies in a later run', async () => {
    const n = 2 * CHUNK_ROWS + 5;
    const rows = [...Array.from({ length: n }, (_, i) => row('big', i)), row('small', 1), row('small', 2)];
    // A failed copy in the last run, one in the first.
    const failed = new Map([
      [`id-${n - 2}`, 'unsupported_file_type: no parser'],
      ['id-1', 'parse_failed: bad bytes'],
    ]);
    const [pg, sqlite] = await both(rows, failed);
    expect(pg).toHaveLength(n + 2);
    expect(pg).toEqual(sqlite);
    expect(pg.filter((r) => (r as unknown[])[10] !== null)).toHaveLength(3);
  }, 120_000);

  it('reads a source whose later run holds a path with the separator row by row, and loads it whole', async () => {
    const n = CHUNK_ROWS + 10;
    const rows = Array.from({ length: n }, (_, i) => row('big', i));
    rows.push(row('big', n, 'zz/odd\u0001name.md'), row('small', 1));
    const [pg, sqlite] = await both(rows, new Map());
    expect(pg).toHaveLength(n + 2);
    expect(pg).toEqual(sqlite);
  }, 120_000);
});
