import { describe, expect, it } from 'vitest';
import type { ObservedFile } from '../types.js';
import { observedLookup } from './observed-lookup.js';

const file = (source: string, path: string): ObservedFile => ({
  source,
  path,
  absPath: `/${source}/${path}`,
  size: 1,
  mtimeNs: '1',
  inode: 1,
  sha256: null,
});

describe('observedLookup', () => {
  const inOrder = [file('docs', 'a.md'), file('docs', 'b/c.md'), file('docs', 'b.md'), file('wiki', 'a.md')];

  it.each([
    ['in path order (searched in place)', inOrder],
    ['out of order (through a Map)', [...inOrder].reverse()],
  ])('%s: finds each file, in any order of lookups, and nothing else', (_label, files) => {
    const find = observedLookup(files);
    const keys = inOrder.map((f): [string, string] => [f.source, f.path]);

    for (const [source, path] of [...keys, ...[...keys].reverse(), ...keys]) expect(find(source, path)?.absPath).toBe(`/${source}/${path}`);
    expect(find('docs', 'b')).toBeUndefined();
    expect(find('wiki', 'b.md')).toBeUndefined();
    expect(find('aaa', 'a.md')).toBeUndefined();
    expect(find('zzz', 'a.md')).toBeUndefined();
  });
});
