import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  UNKNOWN_INODE,
  UNKNOWN_MTIME_NS,
  UNKNOWN_SIZE,
  type NameMapper,
  type RemoteListingEntry,
  type StateStore,
} from '../../../src/sync/state/index.js';
import { shaOf } from './fixtures/realistic.js';
import { fakeClock, tempState } from './fixtures/state-dir.js';

const entry = (id: string, name: string, over: Partial<RemoteListingEntry> = {}): RemoteListingEntry => ({
  id,
  name,
  size: 100,
  sha256: shaOf(name),
  status: 'processed',
  ...over,
});

/** Two sources: remote names are "<source>/<path>". */
const mapName: NameMapper = (name) => {
  const slash = name.indexOf('/');
  const source = name.slice(0, slash);
  return slash > 0 && (source === 'docs' || source === 'wiki') ? { source, path: name.slice(slash + 1) } : null;
};

describe('rebuildFromRemote', () => {
  let t: ReturnType<typeof tempState>;
  let store: StateStore;
  beforeEach(() => {
    t = tempState();
    store = t.open({ now: fakeClock('2025-03-14T12:00:00.000Z').now });
  });
  afterEach(() => t.cleanup());

  it('tracks every listed file of ours with unknown stat, so the next pass re-hashes and matches by content', () => {
    expect(store.isNew).toBe(true);
    expect(store.remoteCheckPending()).toBe(true);

    const report = store.rebuildFromRemote(
      [entry('1', 'docs/a.md'), entry('2', 'wiki/b/c.md', { size: null, status: 'indexing' })],
      mapName,
    );

    expect(report).toEqual({ inserted: 2, unmapped: 0, withoutHash: 0, superseded: 0, kept: 0 });
    expect(store.getTracked('docs', 'a.md')).toEqual({
      source: 'docs',
      path: 'a.md',
      size: 100,
      mtimeNs: UNKNOWN_MTIME_NS,
      inode: UNKNOWN_INODE,
      sha256: shaOf('docs/a.md'),
      remoteName: 'docs/a.md',
      remoteId: '1',
      remoteStatus: 'processed',
      reprocessAttempts: 0,
      lastAction: 'rebuilt',
      lastReason: 'rebuilt from the remote listing',
      updatedAt: '2025-03-14T12:00:00.000Z',
    });
    expect(store.getTracked('wiki', 'b/c.md')).toMatchObject({ size: UNKNOWN_SIZE, remoteStatus: 'unknown', remoteName: 'wiki/b/c.md' });
    expect(JSON.parse(store.getMeta('rebuilt_from_remote') ?? 'null')).toEqual({ at: '2025-03-14T12:00:00.000Z', ...report });
    expect(store.remoteCheckPending()).toBe(false);
  });

  it('keeps the newest of several uploads of one name, and skips what it cannot use', () => {
    const listing = [
      entry('1', 'docs/a.md', { sha256: shaOf('old') }),
      entry('2', 'elsewhere/x.md'),
      entry('3', 'docs/nohash.md', { sha256: null }),
      entry('4', 'docs/a.md', { sha256: shaOf('new') }),
    ];

    const report = store.rebuildFromRemote(listing, mapName);

    expect(report).toEqual({ inserted: 1, unmapped: 1, withoutHash: 1, superseded: 1, kept: 0 });
    expect(store.getTracked('docs', 'a.md')).toMatchObject({ remoteId: '4', sha256: shaOf('new') });
    expect(store.trackedCount()).toBe(1);
  });

  it('leaves paths that are already tracked as they are', () => {
    store.rebuildFromRemote([entry('1', 'docs/a.md')], mapName);

    const report = store.rebuildFromRemote([entry('9', 'docs/a.md', { sha256: shaOf('other') })], mapName);

    expect(report).toMatchObject({ inserted: 0, kept: 1 });
    expect(store.getTracked('docs', 'a.md')?.remoteId).toBe('1');
  });

  it('lets content found by hash be recognised after a rebuild', () => {
    store.rebuildFromRemote([entry('1', 'docs/a.md'), entry('2', 'docs/copy.md', { sha256: shaOf('docs/a.md') })], mapName);

    expect(
      store
        .findBySha256(shaOf('docs/a.md'))
        .map((f) => f.remoteId)
        .sort(),
    ).toEqual(['1', '2']);
  });
});
