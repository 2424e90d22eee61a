import { describe, expect, it } from 'vitest';
import { fakeObservation, fakeState } from '../../../test/helpers/plan-fakes.js';
import { joinTracked } from './join.js';

const paths = (rows: ({ path: string } | undefined)[]) => rows.map((r) => r?.path ?? null);

describe('joinTracked', () => {
  it.each([
    ['both sorted (merge join)', ['a.md', 'c.md', 'd.md'], ['a.md', 'b.md', 'd.md', 'e.md'], true],
    ['files unsorted (hash join)', ['d.md', 'a.md', 'c.md'], ['a.md', 'b.md', 'd.md', 'e.md'], false],
    ['tracked unsorted (merge join abandoned midway)', ['a.md', 'c.md', 'd.md'], ['e.md', 'a.md', 'd.md', 'b.md'], true],
    ['no tracked rows', ['a.md', 'b.md'], [], true],
    ['no files', [], ['a.md', 'b.md'], true],
  ])('%s: pairs files with rows and lists the unmatched rows', (_label, files, rows, sorted) => {
    const obs = fakeObservation();
    for (const p of files) obs.file(p);
    const state = fakeState();
    for (const p of rows) state.tracked(p);
    const observed = obs.build().files;

    const join = joinTracked(observed, state.build());

    expect(paths(join.rows)).toEqual(observed.map((f) => (rows.includes(f.path) ? f.path : null)));
    expect(join.unmatched.map((t) => t.path).sort()).toEqual(rows.filter((p) => !files.includes(p)).sort());
    expect(join.filesSorted).toBe(sorted);
    for (const p of files) expect(join.hasFile('docs', p)).toBe(true);
    expect(join.hasFile('docs', 'zzz.md')).toBe(false);
    expect(join.hasFile('other', files[0] ?? 'a.md')).toBe(false);
  });

  it('orders by source before path (a path in source "a" comes before any path in source "b")', () => {
    const observed = fakeObservation().file('z.md', { source: 'a' }).file('a.md', { source: 'b' }).build().files;
    const tracked = fakeState().tracked('z.md', { source: 'a' }).tracked('a.md', { source: 'b' }).build();

    const join = joinTracked(observed, tracked);

    expect(join.filesSorted).toBe(true);
    expect(paths(join.rows)).toEqual(['z.md', 'a.md']);
    expect(join.unmatched).toEqual([]);
  });

  it('does not take a file listed twice for sorted (so the duplicate is caught downstream)', () => {
    const observed = fakeObservation().file('a.md').file('a.md').build().files;

    expect(joinTracked(observed, new Map()).filesSorted).toBe(false);
  });
});
