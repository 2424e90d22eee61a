import { describe, expect, it, vi } from 'vitest';
import type { TrackedFile } from '../types.js';
import type { TrackedColumns, TrackedDetails } from './columns.js';
import { TrackedIndex } from './tracked-index.js';
import { sha256Column } from './sha256-column.js';
import { mtimeColumn } from './mtime-column.js';
import { trackedKey } from './keys.js';
import { createPrng } from '../../../test/helpers/prng.js';

const tracked = (source: string, path: string, size = 1): TrackedFile => ({
  source,
  path,
  size,
  mtimeNs: '1',
  inode: 1,
  sha256: 'a'.repeat(64),
  remoteName: path,
  remoteId: null,
  remoteStatus: null,
  reprocessAttempts: 0,
  lastAction: null,
  lastReason: null,
  updatedAt: '2025-01-01T00:00:00.000Z',
});

describe('TrackedIndex', () => {
  it('put replaces a row, inserts one in order, removes one (null), and lookups after it stay right', () => {
    const index = TrackedIndex.of([tracked('docs', 'a.md'), tracked('docs', 'c.md'), tracked('wiki', 'a.md')]);
    index.rowOf('wiki', 'a.md'); // a cursor at the end
    index.put('docs', 'b.md', tracked('docs', 'b.md', 7));
    index.put('docs', 'c.md', tracked('docs', 'c.md', 9));
    index.put('docs', 'a.md', null);
    index.put('docs', 'zz.md', null); // not tracked: nothing to remove
    expect([...index.keys()]).toEqual([trackedKey('docs', 'b.md'), trackedKey('docs', 'c.md'), trackedKey('wiki', 'a.md')]);
    expect(index.find('docs', 'b.md')?.size).toBe(7);
    expect(index.find('docs', 'c.md')?.size).toBe(9);
    expect(index.rowOf('docs', 'a.md')).toBe(-1);
    expect(index.rowOf('wiki', 'a.md')).toBe(2);
  });

  it('hasRemoteStatus: a row with a remote copy in one of the statuses (as the state answers hasUnsettledRemote)', () => {
    const unsettled = new Set(['queued', 'processing', 'unknown'] as const);
    const settled = TrackedIndex.of([{ ...tracked('docs', 'a.md'), remoteId: 'r1', remoteStatus: 'processed' }, tracked('docs', 'b.md')]);
    expect(settled.hasRemoteStatus(unsettled)).toBe(false);
    // A status with no remote copy is nothing to learn.
    settled.put('docs', 'b.md', { ...tracked('docs', 'b.md'), remoteStatus: 'unknown' });
    expect(settled.hasRemoteStatus(unsettled)).toBe(false);
    settled.put('docs', 'c.md', { ...tracked('docs', 'c.md'), remoteId: 'r3', remoteStatus: 'queued' });
    expect(settled.hasRemoteStatus(unsettled)).toBe(true);
  });

  it('settledAt: never for a row marked deleted, whether the row came as columns, as a file or by a put', () => {
    const settled = { remoteId: 'r1', remoteStatus: 'processed' as const };
    const gone = { ...tracked('docs', 'a.md'), ...settled, lastAction: 'deleted' };
    const here = { ...tracked('docs', 'b.md'), ...settled, lastAction: 'upload' };
    const stat = { size: 1, mtimeNs: '1', inode: 1 };
    const fromColumns = new TrackedIndex();
    fromColumns.addColumns('docs', columnsOf([gone, here]));
    for (const index of [fromColumns, TrackedIndex.of([gone, here])]) {
      expect([0, 1].map((row) => [index.deletedAt(row), index.settledAt(row, stat)])).toEqual([
        [true, false],
        [false, true],
      ]);
      index.put('docs', 'a.md', { ...gone, lastAction: 'skip:unchanged' });
      index.put('docs', 'b.md', { ...here, lastAction: 'deleted' });
      expect([0, 1].map((row) => index.settledAt(row, stat))).toEqual([true, false]);
    }
  });

  it("rowsUnder: every row below a folder, or only the folder's own files", () => {
    const paths = ['a', 'a-b.md', 'a.md', 'a/x.md', 'a/sub/y.md', 'a/sub/z/w.md', 'a/t.md', 'a0.md', 'b.md'];
    const index = TrackedIndex.of([...paths.map((p) => tracked('docs', p)), tracked('wiki', 'a/x.md')]);
    const under = (dir: string, direct: boolean) => index.rowsUnder('docs', dir, direct).map((row) => index.fileAt(row).path);
    expect(under('a', false)).toEqual(['a/sub/y.md', 'a/sub/z/w.md', 'a/t.md', 'a/x.md']);
    expect(under('a', true)).toEqual(['a/t.md', 'a/x.md']);
    expect(under('a/sub', true)).toEqual(['a/sub/y.md']);
    expect(under('', true)).toEqual(['a', 'a-b.md', 'a.md', 'a0.md', 'b.md']);
    expect(under('', false)).toHaveLength(paths.length);
    expect(under('nope', false)).toEqual([]);
  });

  it('reads like a Map keyed by trackedKey(source, path), in (source, path) order', () => {
    const files = [tracked('docs', 'a.md'), tracked('docs', 'b/c.md'), tracked('wiki', 'a.md')];

    const index = TrackedIndex.of(files);

    expect(index.size).toBe(3);
    expect(index.get(trackedKey('wiki', 'a.md'))).toBe(files[2]);
    expect(index.has(trackedKey('docs', 'b/c.md'))).toBe(true);
    expect(index.get(trackedKey('docs', 'nope.md'))).toBeUndefined();
    expect(index.get('no separator')).toBeUndefined();
    expect([...index.values()]).toEqual(files);
    expect([...index.keys()]).toEqual(files.map((f) => trackedKey(f.source, f.path)));
    expect([...index]).toEqual([...new Map(files.map((f) => [trackedKey(f.source, f.path), f]))]);
    const seen: string[] = [];
    index.forEach((f, key, map) => {
      expect(map).toBe(index);
      seen.push(`${key}=${f.path}`);
    });
    expect(seen).toEqual(['docs\0a.md=a.md', 'docs\0b/c.md=b/c.md', 'wiki\0a.md=a.md']);
  });

  it('finds by source and path without building a key', () => {
    const index = TrackedIndex.of([tracked('docs', 'a.md'), tracked('wiki', 'a.md', 2)]);

    expect(index.find('wiki', 'a.md')?.size).toBe(2);
    expect(index.find('other', 'a.md')).toBeUndefined();
  });

  it('a file added twice: the last one wins, whether it came in order or not', () => {
    const index = TrackedIndex.of([tracked('docs', 'a.md'), tracked('docs', 'b.md'), tracked('docs', 'a.md', 9)]);
    const inOrder = TrackedIndex.of([tracked('docs', 'a.md'), tracked('docs', 'a.md', 7)]);

    expect(index.size).toBe(2);
    expect([...index.values()].map((f) => [f.path, f.size])).toEqual([
      ['a.md', 9],
      ['b.md', 1],
    ]);
    expect([...inOrder.values()].map((f) => f.size)).toEqual([7]);
  });

  it('files added out of order are iterated and found in (source, path) order', () => {
    const index = TrackedIndex.of([tracked('wiki', 'z.md'), tracked('docs', 'b.md'), tracked('docs', 'a.md'), tracked('docs', 'a/x.md')]);

    expect([...index.values()].map((f) => `${f.source}/${f.path}`)).toEqual(['docs/a.md', 'docs/a/x.md', 'docs/b.md', 'wiki/z.md']);
    expect(index.find('docs', 'a/x.md')?.path).toBe('a/x.md');
  });

  it('answers every lookup right, in ascending, descending and random order, found or not', () => {
    const paths = Array.from({ length: 500 }, (_, i) => `d${String(i % 37).padStart(2, '0')}/f${String(i).padStart(4, '0')}.md`).sort();
    const index = TrackedIndex.of(paths.filter((_, i) => i % 3 !== 0).map((p) => tracked('docs', p)));
    const expected = (p: string, i: number): boolean => i % 3 !== 0 && paths.includes(p);
    let seed = 7;
    const random = paths.map((p, i) => ({ p, i, r: (seed = (seed * 16807) % 2147483647) })).sort((a, b) => a.r - b.r);

    for (const order of [paths.map((p, i) => ({ p, i })), paths.map((p, i) => ({ p, i })).reverse(), random]) {
      for (const { p, i } of order) {
        expect(index.find('docs', p)?.path, p).toBe(expected(p, i) ? p : undefined);
        expect(index.find('docs', `${p}.missing`)).toBeUndefined();
      }
    }
    expect(index.find('aaa', paths[1] as string)).toBeUndefined();
    expect(index.find('zzz', paths[1] as string)).toBeUndefined();
  });

  it("takes a source's rows as columns, and makes each row's TrackedFile once, when asked", () => {
    const docs = [
      tracked('docs', 'a.md', 1),
      { ...tracked('docs', 'b.md', 2), remoteId: '7', remoteStatus: 'processed' as const, lastAction: 'upload' },
    ];
    const wiki = [{ ...tracked('wiki', 'a.md', 3), remoteName: 'wiki/a.md', reprocessAttempts: 2 }];
    const index = new TrackedIndex();

    index.addColumns('docs', columnsOf(docs));
    index.addColumns('wiki', columnsOf(wiki));

    expect(index.size).toBe(3);
    expect(index.rowOf('docs', 'b.md')).toBe(1);
    expect(index.rowOf('wiki', 'b.md')).toBe(-1);
    expect([index.remoteIdAt(1), index.remoteStatusAt(1), index.remoteNameAt(2), index.sha256At(0)]).toEqual([
      '7',
      'processed',
      'wiki/a.md',
      'a'.repeat(64),
    ]);
    expect([...index.values()]).toEqual([...docs, ...wiki]);
    expect(index.fileAt(2)).toBe(index.find('wiki', 'a.md'));
    expect(() => index.fileAt(3)).toThrow(RangeError);
  });

  it('sorts sources whose columns came out of name order', () => {
    const index = new TrackedIndex();
    index.addColumns('wiki', columnsOf([tracked('wiki', 'a.md')]));
    index.addColumns('docs', columnsOf([tracked('docs', 'z.md'), tracked('docs', 'zz.md')]));

    expect([...index.keys()]).toEqual(['docs\0z.md', 'docs\0zz.md', 'wiki\0a.md']);
    expect(index.find('docs', 'zz.md')?.path).toBe('zz.md');
  });

  it('refuses columns that do not hold one value per file, naming the source and the column', () => {
    const columns = { ...columnsOf([tracked('docs', 'a.md'), tracked('docs', 'b.md')]), inodes: [1] };

    expect(() => new TrackedIndex().addColumns('docs', columns)).toThrow(
      'tracked files of source "docs": inodes holds 1 values for 2 files',
    );
  });

  it('decodes the details (attempts, last action and reason, time) once, when the first TrackedFile is made, each to its row', () => {
    const wiki = [{ ...tracked('wiki', 'a.md'), reprocessAttempts: 1, lastAction: 'upload', lastReason: 'new file' }];
    const docs = [tracked('docs', 'x.md'), { ...tracked('docs', 'y.md'), reprocessAttempts: 2, lastAction: 'skip:unchanged' }];
    const decode = vi.fn((files: TrackedFile[]) => columnsOf(files).details as TrackedDetails);
    const index = new TrackedIndex();
    index.addColumns('wiki', { ...columnsOf(wiki), details: () => decode(wiki) });
    index.addColumns('docs', { ...columnsOf(docs), details: () => decode(docs) });

    const beforeAnyFile = {
      calls: decode.mock.calls.length,
      row: index.rowOf('docs', 'y.md'),
      sha: index.knownSha256('wiki', 'a.md', null),
    };
    const files = [...index.values()];
    index.fileAt(0);

    expect(beforeAnyFile).toEqual({ calls: 0, row: 1, sha: 'a'.repeat(64) });
    expect(decode).toHaveBeenCalledTimes(2);
    expect(files).toEqual([...docs, ...wiki]);
  });

  it('finds the rows holding any of some hashes, in (source, path) order, whatever order the files came in', () => {
    const sha = (c: string): string => c.repeat(64);
    const index = TrackedIndex.of([
      { ...tracked('wiki', 'z.md'), sha256: sha('b') },
      { ...tracked('docs', 'b.md'), sha256: sha('c') },
      { ...tracked('docs', 'a.md'), sha256: sha('b') },
      { ...tracked('docs', 'c.md'), sha256: sha('d') },
    ]);

    const rows = index.rowsWithSha256(new Set([sha('b'), sha('d'), sha('e')]));

    expect(rows.map((row) => [index.fileAt(row).source, index.fileAt(row).path])).toEqual([
      ['docs', 'a.md'],
      ['docs', 'c.md'],
      ['wiki', 'z.md'],
    ]);
    expect(index.rowsWithSha256(new Set())).toEqual([]);
  });

  it('finds the same rows for a few wanted hashes (compared as strings) as for many (looked up in a set)', () => {
    const hex = (n: number): string => n.toString(16).padStart(64, '0');
    const files = Array.from({ length: 500 }, (_, i) => ({
      ...tracked('docs', `f${String(i).padStart(3, '0')}.md`),
      sha256: hex((i * 7) % 40),
    }));
    const index = TrackedIndex.of(files);
    for (const size of [1, 2, 8, 9, 20]) {
      const wanted = new Set(Array.from({ length: size }, (_, i) => hex((i * 3) % 45)));
      const expected = files.flatMap((f, row) => (wanted.has(f.sha256) ? [row] : []));
      expect(index.rowsWithSha256(wanted), `${size} wanted`).toEqual(expected);
    }
  });

  it('finds the rows of wanted hashes as a comparison of strings does, through puts, removals, adds and sorts (200 random runs)', () => {
    // Hashes that share their first bytes with others (a search must compare whole rows), the all-zero hash
    // (an odd row's bytes), and values that are not lowercase hex (kept aside as strings).
    const shas = ['abcdef0', 'abcdef1', '0000000', 'fffffff'].flatMap((p) => [0, 1, 2].map((k) => `${p}${String(k).repeat(57)}`));
    shas.push('0'.repeat(64), 'not-a-hash', '', 'A'.repeat(64));
    for (let seed = 1; seed <= 200; seed++) {
      const rng = createPrng(seed);
      const pick = (): string => shas[rng.int(0, shas.length - 1)] as string;
      const file = (i: number): TrackedFile => ({ ...tracked('docs', `f${String(i).padStart(3, '0')}.md`), sha256: pick() });
      const index = TrackedIndex.of(Array.from({ length: rng.int(0, 40) }, (_, i) => file(i * 2)));
      for (let step = 0; step < 30; step++) {
        const op = rng.next();
        const f = file(rng.int(0, 90));
        if (op < 0.5) index.put(f.source, f.path, f);
        else if (op < 0.8) index.put(f.source, f.path, null);
        else index.add(f); // out of order: the next read sorts
        const wanted = new Set(Array.from({ length: rng.int(1, 12) }, pick));
        const rows = index.rowsWithSha256(wanted);
        const expected = [...index.values()].flatMap((t, row) => (wanted.has(t.sha256) ? [row] : []));
        expect(rows, `seed ${seed} step ${step}`).toEqual(expected);
        expect(Array.from({ length: index.size }, (_, row) => index.sha256At(row))).toEqual([...index.values()].map((t) => t.sha256));
      }
    }
  });

  it('looks the details of the first files made up one by one, then decodes them all at once', () => {
    const files = Array.from({ length: 2100 }, (_, i) => ({
      ...tracked('docs', `f${String(i).padStart(4, '0')}.md`),
      lastAction: `action ${i}`,
    }));
    const all = columnsOf(files).details as TrackedDetails;
    const decode = vi.fn(() => all);
    // A row's details in DETAIL_FIELDS' order: attempts, last action and reason, time, chunk count.
    const detailsOf = vi.fn((i: number) => [0, `action ${i}`, null, Date.UTC(2025, 0, 1), null]);
    const index = new TrackedIndex();
    index.addColumns('docs', { ...columnsOf(files), details: decode, detailsOf });

    for (let row = 0; row < 2048; row++) expect(index.fileAt(row).lastAction).toBe(`action ${row}`);
    expect([detailsOf.mock.calls.length, decode.mock.calls.length]).toEqual([2048, 0]);
    expect(index.fileAt(2048).lastAction).toBe('action 2048');
    expect(index.fileAt(2099).lastAction).toBe('action 2099');
    expect([detailsOf.mock.calls.length, decode.mock.calls.length]).toEqual([2048, 1]);
  });

  it("makes a row's time ISO only when its TrackedFile is made (the state gives epoch milliseconds)", () => {
    const [a, b] = [tracked('docs', 'a.md'), tracked('docs', 'b.md')];
    const index = new TrackedIndex();
    const details = { ...(columnsOf([a, b]).details as TrackedDetails), updatedAt: [Date.UTC(2026, 10, 22, 9, 30), b.updatedAt] };
    index.addColumns('docs', { ...columnsOf([a, b]), details: () => details });

    expect(index.find('docs', 'a.md')?.updatedAt).toBe('2026-11-22T09:30:00.000Z');
    expect(index.find('docs', 'b.md')?.updatedAt).toBe(b.updatedAt);
    expect(details.updatedAt[0]).toBe(Date.UTC(2026, 10, 22, 9, 30)); // converted per row, not as a column
  });

  it('a file added over a row whose details are not decoded yet keeps its own details', () => {
    const index = new TrackedIndex();
    index.addColumns('docs', {
      ...columnsOf([tracked('docs', 'a.md')]),
      details: () => columnsOf([{ ...tracked('docs', 'a.md'), lastAction: 'old' }]).details as TrackedDetails,
    });

    index.add({ ...tracked('docs', 'a.md'), lastAction: 'new' });

    expect(index.find('docs', 'a.md')?.lastAction).toBe('new');
  });

  it('refuses, when they are decoded, details that do not hold one value per file', () => {
    const index = new TrackedIndex();
    const details = { ...(columnsOf([tracked('docs', 'a.md')]).details as TrackedDetails), lastReasons: [] };
    index.addColumns('docs', { ...columnsOf([tracked('docs', 'a.md')]), details: () => details });

    expect(index.rowOf('docs', 'a.md')).toBe(0);
    expect(() => index.fileAt(0)).toThrow('tracked files of source "docs": lastReasons holds 0 values for 1 files');
  });

  it('a block of details that fails to decode fails again at the next call, never leaving rows without details', () => {
    const index = new TrackedIndex();
    const decode = vi.fn((): TrackedDetails => {
      throw new SyntaxError('Unexpected end of JSON input');
    });
    index.addColumns('docs', { ...columnsOf([tracked('docs', 'a.md')]), details: decode });

    const message = 'tracked files of source "docs": details: Unexpected end of JSON input';
    expect(() => index.fileAt(0)).toThrow(message);
    expect(() => index.fileAt(0)).toThrow(message);
    expect(() => [...index.values()]).toThrow(message);
    expect(decode).toHaveBeenCalledTimes(3);
  });

  it('finds a path tracked in two sources in each, in order and right after a sort', () => {
    const index = TrackedIndex.of([tracked('wiki', 'b.md', 3), tracked('docs', 'a.md', 1), tracked('docs', 'b.md', 2)]);

    const rows = [
      index.rowOf('docs', 'a.md'),
      index.rowOf('docs', 'b.md'),
      index.rowOf('wiki', 'b.md'),
      index.rowOf('wiki', 'b.md'),
      index.rowOf('docs', 'b.md'),
    ];
    const missing = [index.rowOf('docs', 'c.md'), index.rowOf('wiki', 'a.md'), index.rowOf('aaa', 'b.md')];

    expect(rows).toEqual([0, 1, 2, 2, 1]);
    expect(missing).toEqual([-1, -1, -1]);
    expect(rows.map((row) => index.fileAt(row).size)).toEqual([1, 2, 3, 3, 2]);
  });

  it('its row accessors read the same row as fileAt, also after files added out of order', () => {
    const index = TrackedIndex.of([tracked('docs', 'b.md')]);
    index.add({ ...tracked('docs', 'a.md'), sha256: 'b'.repeat(64), remoteId: '9', remoteStatus: 'failed', remoteName: 'A' });

    const row = index.rowOf('docs', 'a.md');

    expect(row).toBe(0);
    expect([index.sha256At(row), index.remoteIdAt(row), index.remoteStatusAt(row), index.remoteNameAt(row)]).toEqual([
      'b'.repeat(64),
      '9',
      'failed',
      'A',
    ]);
    expect(index.sameStat(1, { size: 1, mtimeNs: '1', inode: 1 })).toBe(true);
  });

  it('knownSha256: the recorded hash while the fingerprint still fits (or none is given), else null', () => {
    const index = TrackedIndex.of([tracked('docs', 'a.md', 5)]);
    const stat = { size: 5, mtimeNs: '1', inode: 1 };

    expect(index.knownSha256('docs', 'a.md', stat)).toBe('a'.repeat(64));
    expect(index.knownSha256('docs', 'a.md', { ...stat, mtimeNs: '2' })).toBeNull();
    expect(index.knownSha256('docs', 'a.md', { ...stat, size: 6 })).toBeNull();
    expect(index.knownSha256('docs', 'a.md', { ...stat, inode: 2 })).toBeNull();
    expect(index.knownSha256('docs', 'a.md', null)).toBe('a'.repeat(64));
    expect(index.knownSha256('docs', 'b.md', null)).toBeNull();
  });

  it('knownSha256Of answers as knownSha256, and leaves the file the same path and (when it fits) the same time', () => {
    const index = TrackedIndex.of([tracked('docs', 'a.md', 5), tracked('docs', 'b.md', 5)]);
    const file = (path: string, over: { size?: number; mtimeNs?: string } = {}) => ({
      source: 'docs',
      path: `${path}.md`,
      size: 5,
      mtimeNs: '1',
      inode: 1,
      ...over,
    });

    const same = file('a');
    const touched = file('b', { mtimeNs: '2' });
    const untracked = file('c');
    const byGit = file('b', { mtimeNs: '3' });

    expect(index.knownSha256Of(same, false)).toBe('a'.repeat(64));
    expect(index.knownSha256Of(touched, false)).toBeNull();
    expect(index.knownSha256Of(untracked, false)).toBeNull();
    expect(index.knownSha256Of(byGit, true)).toBe('a'.repeat(64));
    expect([same, touched, untracked, byGit].map((f) => [f.path, f.mtimeNs])).toEqual([
      ['a.md', '1'],
      ['b.md', '2'],
      ['c.md', '1'],
      ['b.md', '3'],
    ]);
  });
});

function columnsOf(files: TrackedFile[]): TrackedColumns {
  return {
    paths: files.map((f) => f.path),
    sizes: files.map((f) => f.size),
    mtimeNs: mtimeColumn(files.map((f) => f.mtimeNs)),
    inodes: files.map((f) => f.inode),
    sha256: sha256Column(files.map((f) => f.sha256)),
    remoteNames: files.map((f) => f.remoteName),
    remoteIds: files.map((f) => f.remoteId),
    remoteStatuses: files.map((f) => f.remoteStatus),
    deleted: files.map((f) => (f.lastAction === 'deleted' ? 1 : 0)),
    details: {
      reprocessAttempts: files.map((f) => f.reprocessAttempts),
      lastActions: files.map((f) => f.lastAction),
      lastReasons: files.map((f) => f.lastReason),
      updatedAt: files.map((f) => f.updatedAt),
      remoteChunks: files.map((f) => f.remoteChunks ?? null),
    },
  };
}
