import { describe, expect, it } from 'vitest';
import type { TrackedFile } from '../types.js';
import { TrackedIndex } from './tracked-index.js';
import { trackedKey } from './tracked-files.js';

const tracked = (source: string, path: string, size = 1): TrackedFile => ({
  source, path, size, mtimeNs: '1', inode: 1, sha256: 'a'.repeat(64), remoteName: path, remoteId: null, remoteStatus: null,
  reprocessAttempts: 0, lastAction: null, lastReason: null, updatedAt: '2025-01-01T00:00:00.000Z',
});

describe('TrackedIndex', () => {
  it('reads like a Map keyed by trackedKey(source, path), in the order files were added', () => {
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

  it('replaces a file added twice in place (size and order unchanged)', () => {
    const index = TrackedIndex.of([tracked('docs', 'a.md'), tracked('docs', 'b.md'), tracked('docs', 'a.md', 9)]);

    expect(index.size).toBe(2);
    expect([...index.values()].map((f) => [f.path, f.size])).toEqual([['a.md', 9], ['b.md', 1]]);
  });
});
