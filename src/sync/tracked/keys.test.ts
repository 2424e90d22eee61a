import { describe, expect, it } from 'vitest';
import { lowerBoundFrom, pathOrderedFinder } from './keys.js';

describe('lowerBoundFrom', () => {
  it('finds the first entry not before the key from any starting point, as a linear scan does', () => {
    for (const list of [[], [5], [1, 3], [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]]) {
      for (let key = -1; key <= 26; key++) {
        const expected = list.findIndex((v) => v >= key);
        for (let from = 0; from <= list.length + 1; from++) {
          const probed: number[] = [];
          const got = lowerBoundFrom(list.length, from, (i) => {
            probed.push(i);
            return (list[i] as number) < key;
          });
          expect(got, `list ${list.join(',')} key ${key} from ${from}`).toBe(expected < 0 ? list.length : expected);
          expect(probed.every((i) => i >= 0 && i < list.length)).toBe(true);
        }
      }
    }
  });

  it('costs a comparison or two per query in ascending order', () => {
    const list = Array.from({ length: 10_000 }, (_, i) => i * 2);
    let from = 0;
    let probes = 0;
    for (let key = 0; key < 20_000; key++) {
      from = lowerBoundFrom(list.length, from, (i) => {
        probes += 1;
        return (list[i] as number) < key;
      });
    }
    expect(probes).toBeLessThan(3 * 20_000);
  });
});

describe('pathOrderedFinder', () => {
  it('finds entries across sources, in ascending, descending and repeated queries', () => {
    const list = [
      { source: 'a', path: 'x.md' },
      { source: 'a', path: 'y.md' },
      { source: 'b', path: 'a.md' },
    ];
    const find = pathOrderedFinder(list);
    const queries: [string, string][] = [
      ['a', 'x.md'],
      ['a', 'x.md'],
      ['a', 'xx.md'],
      ['b', 'a.md'],
      ['a', 'y.md'],
      ['a', 'a.md'],
      ['c', 'a.md'],
    ];

    expect(queries.map(([s, p]) => find(s, p))).toEqual([0, 0, -1, 2, 1, -1, -1]);
  });
});
