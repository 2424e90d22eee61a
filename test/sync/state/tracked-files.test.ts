import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSourceIds } from '../../../src/sync/state/sqlite/sources.js';
import { createTrackedFiles } from '../../../src/sync/state/sqlite/tracked.js';
import { readBulk } from '../../../src/sync/state/sqlite/tracked-bulk.js';
import { trackedKey, type StateStore, type TrackedFileInput } from '../../../src/sync/state/index.js';
import { shaOf } from './fixtures/realistic.js';
import { fakeClock, tempState } from './fixtures/state-dir.js';

const file = (path: string, over: Partial<TrackedFileInput> = {}): TrackedFileInput => ({
  source: 'docs',
  path,
  size: 2048,
  mtimeNs: '1718000000123456789',
  inode: 77,
  sha256: shaOf(path),
  remoteName: path,
  remoteId: `r-${path}`,
  remoteStatus: 'processed',
  reprocessAttempts: 0,
  lastAction: 'upload',
  lastReason: 'new file',
  ...over,
});

describe('tracked files', () => {
  let t: ReturnType<typeof tempState>;
  let store: StateStore;
  const clock = fakeClock('2025-03-14T12:00:00.000Z');
  beforeEach(() => {
    t = tempState();
    store = t.open({ now: clock.now });
  });
  afterEach(() => t.cleanup());

  it('round-trips every field, nanosecond mtimes exactly', () => {
    store.upsertTracked(file('a/b.md'));

    const loaded = store.loadTrackedFiles();

    expect([...loaded.keys()]).toEqual([trackedKey('docs', 'a/b.md')]);
    expect(loaded.get('docs\0a/b.md')).toEqual({ ...file('a/b.md'), updatedAt: '2025-03-14T12:00:00.000Z' });
  });

  it('loads in bulk exactly what it loads row by row: nulls, remote names, odd paths, negative and huge mtimes, several sources', () => {
    const files = [
      file('b.md', { remoteId: null, remoteStatus: null, lastAction: null, lastReason: null }),
      file('a,b;c.md', { remoteName: 'docs/a,b;c.md', mtimeNs: '-1234567890123' }),
      file('dir/naïve 日本.md', {
        remoteName: 'elsewhere.md',
        mtimeNs: '9223372036854775807',
        reprocessAttempts: 2,
        remoteStatus: 'failed',
      }),
      file('a.md', { source: 'wiki', inode: 2 ** 40, size: 0 }),
    ];
    store.upsertTrackedMany(files);

    const loaded = [...store.loadTrackedFiles().values()];

    const one = (f: TrackedFileInput) => store.getTracked(f.source, f.path);
    expect(loaded).toEqual([1, 0, 2, 3].map((i) => one(files[i] as TrackedFileInput)));
    expect(loaded.map((f) => `${f.source}:${f.path}`)).toEqual(['docs:a,b;c.md', 'docs:b.md', 'docs:dir/naïve 日本.md', 'wiki:a.md']);
  });

  it('loads values holding NULs, quotes, backslashes and newlines exactly', () => {
    // Remote ids come joined by NULs: one holding a NUL makes the column read again as JSON, nulls and '' included.
    const files = [
      file('a.md', { remoteId: 'id\0with-nul', lastReason: 'x\0y "q" \\ \n z' }),
      file('b"\\.md'),
      file('c.md', { remoteId: null }),
      file('d.md', { remoteId: '' }),
      file('e.md', { remoteId: '\0' }),
    ];
    store.upsertTrackedMany(files);

    expect([...store.loadTrackedFiles().values()]).toEqual(files.map((f) => store.getTracked(f.source, f.path)));
  });

  it.each([
    ['a path holding a NUL (rebuilt from a name the service sent)', { path: 'odd\0name.md' }],
    ['a remote id holding a NUL', { remoteId: 'id\0nul' }],
  ] as [string, { path?: string; remoteId?: string }][])(
    'refuses a column read again after its rows changed (%s): plan again, never misaligned columns',
    (_label, odd) => {
      store.upsertTrackedMany([
        file('a.md'),
        file(odd.path ?? 'b.md', odd.remoteId === undefined ? {} : { remoteId: odd.remoteId }),
        file('c.md'),
      ]);
      // The bulk row read first, on another connection (as the tracked-files worker reads it)...
      const reader = new Database(t.path, { readonly: true });
      const bulk = new Map(readBulk(reader));
      reader.close();
      // ...then a row replaced (same count) before the odd column is read again on this one.
      store.removeTracked('docs', 'c.md');
      store.upsertTracked(file('d.md'));
      const db = new Database(t.path);
      try {
        const tracked = createTrackedFiles(db, createSourceIds(db), () => 0);

        expect(() => tracked.loadTrackedFiles(bulk)).toThrow(
          /tracked files of source "docs": changed while they were read \(their (hashes|paths) moved\): plan again/,
        );
        // Read afresh, the rows are whole again.
        expect([...tracked.loadTrackedFiles().values()].map((f) => f.path)).toEqual(['a.md', 'd.md', odd.path ?? 'b.md'].sort());
      } finally {
        db.close();
      }
    },
  );

  it('keeps an empty remote id apart from none, and ids that look like numbers as text', () => {
    const files = [
      file('a.md', { remoteId: '' }),
      file('b.md', { remoteId: null }),
      file('c.md', { remoteId: '' }),
      file('d.md', { remoteId: '007' }),
    ];
    store.upsertTrackedMany(files);

    expect([...store.loadTrackedFiles().values()].map((f) => f.remoteId)).toEqual(['', null, '', '007']);
  });

  it.each([
    ['the path', 'x.md'],
    ['source/path', 'docs/x.md'],
    ['another name', 'renamed/x.md'],
  ])('keeps a remote name equal to %s', (_label, remoteName) => {
    store.upsertTracked(file('x.md', { remoteName }));

    expect(store.getTracked('docs', 'x.md')?.remoteName).toBe(remoteName);
  });

  it('reads the details (attempts, last action and reason, time) when a file is made, and refuses them once the rows changed meanwhile', () => {
    store.upsertTracked(file('a.md', { reprocessAttempts: 2, lastAction: 'reprocess', lastReason: 'failed remotely' }));
    const before = store.loadTrackedFiles();
    before.loadDetails(); // as a sync does before it writes
    const added = store.loadTrackedFiles();

    store.upsertTracked(file('b.md'));

    expect(before.get('docs\0a.md')).toMatchObject({
      reprocessAttempts: 2,
      lastAction: 'reprocess',
      lastReason: 'failed remotely',
      updatedAt: '2025-03-14T12:00:00.000Z',
    });
    // A sanity check (the writer lock keeps other processes out, and a sync reads the details before it writes).
    expect(() => added.loadDetails()).toThrow(
      'tracked files of source "docs": changed while they were read (1 at first, 2 later): plan again',
    );
    const removed = store.loadTrackedFiles();
    const fresh = store.loadTrackedFiles();
    store.removeTracked('docs', 'a.md');
    expect(() => removed.get('docs\0a.md')).toThrow(
      'tracked files of source "docs": changed while they were read (a.md is gone): plan again',
    );
    expect(fresh.get('docs\0b.md')).toMatchObject({ lastAction: 'upload', lastReason: 'new file' }); // looked up alone
  });

  it('replaces a row on upsert and keeps sources apart', () => {
    store.upsertTrackedMany([file('a.md'), file('a.md', { source: 'wiki' })]);

    store.upsertTracked(file('a.md', { size: 1, sha256: shaOf('new'), remoteId: 'r2' }));

    expect(store.trackedCount()).toBe(2);
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ size: 1, sha256: shaOf('new'), remoteId: 'r2' });
    expect(store.getTracked('wiki', 'a.md')?.size).toBe(2048);
    expect(store.getTracked('nope', 'a.md')).toBeNull();
  });

  it('marks a deleted file but keeps it (the remote copy remains), and can forget it', () => {
    store.upsertTracked(file('gone.md'));
    clock.advance(1000);

    expect(store.markDeleted('docs', 'gone.md')).toBe(true);
    expect(store.getTracked('docs', 'gone.md')).toMatchObject({
      lastAction: 'deleted',
      lastReason: 'deleted locally; the remote copy remains',
      remoteId: 'r-gone.md',
      updatedAt: '2025-03-14T12:00:01.000Z',
    });
    expect(store.removeTracked('docs', 'gone.md')).toBe(true);
    expect(store.removeTracked('docs', 'gone.md')).toBe(false);
    expect(store.markDeleted('docs', 'never.md')).toBe(false);
  });

  it('finds files by content', () => {
    store.upsertTrackedMany([file('a.md', { sha256: shaOf('same') }), file('b.md', { sha256: shaOf('same') }), file('c.md')]);

    const found = store.findBySha256(shaOf('same'));

    expect(found.map((f) => f.path).sort()).toEqual(['a.md', 'b.md']);
  });

  it('sets remote statuses by remote id, one or many', () => {
    store.upsertTrackedMany([file('a.md'), file('b.md'), file('c.md')]);

    expect(store.setRemoteStatus('r-a.md', 'failed')).toBe(1);
    expect(store.setRemoteStatus('r-a.md', 'failed')).toBe(0);
    expect(
      store.recordListing([
        { id: 'r-b.md', status: 'queued', error: null, chunkCount: null },
        { id: 'r-c.md', status: 'processed', error: null, chunkCount: null },
        { id: 'r-zz', status: 'failed', error: null, chunkCount: null },
      ]),
    ).toBe(1);

    expect([...store.loadTrackedFiles().values()].map((f) => [f.path, f.remoteStatus])).toEqual([
      ['a.md', 'failed'],
      ['b.md', 'queued'],
      ['c.md', 'processed'],
    ]);
  });

  it("keeps the service's reason for a failed copy while it stays failed, for the planner (which reads it per failed row) and getTracked", () => {
    store.upsertTrackedMany([file('a.md'), file('b.md')]);

    store.recordListing([
      { id: 'r-a.md', status: 'failed', error: 'parse_failed: bad zip', chunkCount: null },
      { id: 'r-b.md', status: 'failed', error: 'internal: EIO', chunkCount: null },
    ]);

    expect([...store.loadTrackedFiles().values()].map((f) => [f.path, f.remoteStatus, f.remoteError])).toEqual([
      ['a.md', 'failed', 'parse_failed: bad zip'],
      ['b.md', 'failed', 'internal: EIO'],
    ]);
    // Recorded again (a skip decision) with the same copy, still failed: the reason stays.
    store.upsertTracked({ ...file('a.md'), remoteStatus: 'failed', lastAction: 'skip:remote-failed' });
    expect(store.getTracked('docs', 'a.md')?.remoteError).toBe('parse_failed: bad zip');
    // Reprocessed (queued again) or processed: the reason goes.
    store.upsertTracked({ ...file('b.md'), remoteStatus: 'queued', reprocessAttempts: 1 });
    store.recordListing([{ id: 'r-a.md', status: 'processed', error: 'stale reason', chunkCount: null }]);
    expect([...store.loadTrackedFiles().values()].map((f) => [f.path, f.remoteStatus, f.remoteError ?? null])).toEqual([
      ['a.md', 'processed', null],
      ['b.md', 'queued', null],
    ]);
    expect(store.getTracked('docs', 'b.md')?.remoteError).toBeUndefined();
  });

  it('rejects a malformed hash before writing anything', () => {
    expect(() => store.upsertTrackedMany([file('ok.md'), file('bad.md', { sha256: 'nope' })])).toThrow(RangeError);

    expect(store.trackedCount()).toBe(0);
  });
});
