import { describe, expect, it } from 'vitest';
import type { PlanItem } from '../types.js';
import { orderItems } from './order.js';

const item = (path: string, source = 'docs'): PlanItem => ({
  source,
  path,
  action: 'skip:unchanged',
  reason: 'r',
  credits: 0,
  size: 1,
  sha256: null,
  remoteName: path,
  remoteId: null,
});
const paths = (items: readonly PlanItem[]) => items.map((i) => `${i.source}:${i.path}`);

describe('orderItems', () => {
  it('merges extras (given in any order) into sorted bulk items: before, between, inside long runs, after', () => {
    const bulk = Array.from({ length: 200 }, (_, i) => item(`f${String(i).padStart(3, '0')}.md`));
    const extra = [item('zz.md'), item('f150b.md'), item('a.md'), item('f000b.md'), item('f001b.md'), item('a.md', 'aaa')];

    const all = orderItems(bulk, true, extra);

    const expected = [...bulk, ...extra].map((i) => `${i.source}:${i.path}`).sort();
    expect(paths(all)).toEqual(expected);
    expect(all).toHaveLength(206);
  });

  it('returns the bulk as it is when there are no extras', () => {
    const bulk = [item('a.md'), item('b.md')];

    expect(orderItems(bulk, true, [])).toBe(bulk);
  });

  it('sorts everything when the bulk was not sorted', () => {
    const all = orderItems([item('b.md'), item('a.md')], false, [item('c.md'), item('0.md')]);

    expect(paths(all)).toEqual(['docs:0.md', 'docs:a.md', 'docs:b.md', 'docs:c.md']);
  });

  it.each([
    ['an extra that is also a bulk item', [item('a.md'), item('b.md'), item('c.md')], [item('b.md')]],
    ['the same extra twice', [item('a.md')], [item('b.md'), item('b.md')]],
    ['an extra equal to the last bulk item', [item('a.md'), item('b.md')], [item('b.md')]],
    // Past the items walked one by one: found by the search that skips the rest of a long run.
    [
      'an extra that is a bulk item far into a long run',
      Array.from({ length: 200 }, (_, i) => item(`f${String(i).padStart(3, '0')}.md`)),
      [item('f150.md')],
    ],
  ])('refuses two items for one path: %s', (_label, bulk, extra) => {
    expect(() => orderItems(bulk, true, extra)).toThrow(/twice/);
  });
});

describe('orderItems with extras in sorted runs', () => {
  it.each([
    [
      'two runs',
      [
        ['b.md', 'd.md'],
        ['a.md', 'c.md', 'e.md'],
      ],
    ],
    ['three runs and an empty bulk', [['m.md', 'n.md'], ['a.md', 'z.md'], ['b.md']]],
    ['more runs than are merged (sorted instead)', Array.from({ length: 12 }, (_, i) => [`${String.fromCharCode(122 - i)}.md`])],
  ])('%s: the same order a sort gives', (_label, runs) => {
    const extra = runs.flat().map((p) => item(p));

    const all = orderItems([], true, extra);

    expect(paths(all)).toEqual(
      runs
        .flat()
        .map((p) => `docs:${p}`)
        .sort(),
    );
  });

  it('refuses a path that two runs both hold', () => {
    expect(() => orderItems([], true, [item('a.md'), item('b.md'), item('a.md')])).toThrow(/twice/);
  });
});
