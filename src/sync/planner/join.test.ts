import { describe, expect, it } from 'vitest';
import { fakeObservation, fakeState } from '../../../test/helpers/plan-fakes.js';
import { joinTracked, type Join } from './join.js';

const paths = (join: Join) => [...join.rows].map((row) => (row < 0 ? null : join.tracked.fileAt(row).path));

describe('joinTracked', () => {
  it.each([
    ['both sorted', ['a.md', 'c.md', 'd.md'], ['a.md', 'b.md', 'd.md', 'e.md'], true],
    ['files unsorted', ['d.md', 'a.md', 'c.md'], ['a.md', 'b.md', 'd.md', 'e.md'], false],
    ['tracked rows given out of order', ['a.md', 'c.md', 'd.md'], ['e.md', 'a.md', 'd.md', 'b.md'], true],
    ['no tracked rows', ['a.md', 'b.md'], [], true],
    ['no files', [], ['a.md', 'b.md'], true],
  ])('%s: pairs files with rows and lists the unmatched rows', (_label, files, rows, sorted) => {
    const obs = fakeObservation();
    for (const p of files) obs.file(p);
    const state = fakeState();
    for (const p of rows) state.tracked(p);
    const observed = obs.build().files;

    const join = joinTracked(observed, state.build());

    expect(paths(join)).toEqual(observed.map((f) => (rows.includes(f.path) ? f.path : null)));
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
    expect(paths(join)).toEqual(['z.md', 'a.md']);
    expect(join.unmatched).toEqual([]);
  });

  it('a file listed twice matches its row once: the rows no file matched are all still listed', () => {
    const observed = fakeObservation().file('a.md').file('a.md').build().files;
    const tracked = fakeState().tracked('a.md').tracked('b.md').build();

    const join = joinTracked(observed, tracked);

    expect(paths(join)).toEqual(['a.md', 'a.md']);
    expect(join.unmatched.map((t) => t.path)).toEqual(['b.md']);
  });

  it('does not take a file listed twice for sorted (so the duplicate is caught downstream)', () => {
    const observed = fakeObservation().file('a.md').file('a.md').build().files;

    expect(joinTracked(observed, new Map()).filesSorted).toBe(false);
  });
});

describe('joinTracked hasFile on sorted files', () => {
  it('answers queries in ascending order (the planner asks for sorted skip entries) and in any other order', () => {
    const obs = fakeObservation();
    const present = Array.from({ length: 300 }, (_, i) => `p${String(i * 2).padStart(4, '0')}.md`);
    for (const p of present) obs.file(p);
    const join = joinTracked(obs.build().files, new Map());
    const queries = Array.from({ length: 600 }, (_, i) => `p${String(i).padStart(4, '0')}.md`);

    const ascending = queries.map((q) => join.hasFile('docs', q));
    const descending = [...queries]
      .reverse()
      .map((q) => join.hasFile('docs', q))
      .reverse();
    const repeated = queries.map((q) => [join.hasFile('docs', q), join.hasFile('docs', q)]);

    const expected = queries.map((q) => present.includes(q));
    expect(join.filesSorted).toBe(true);
    expect(ascending).toEqual(expected);
    expect(descending).toEqual(expected);
    expect(repeated).toEqual(expected.map((e) => [e, e]));
    expect(join.hasFile('a-source-before', 'p0000.md')).toBe(false);
    expect(join.hasFile('zz-source-after', 'p0000.md')).toBe(false);
  });
});
