import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBurst } from '../../src/watch/burst.js';

const root = '/w/docs';
const burstOf = (o: { followSymlinks?: boolean; maxPaths?: number } = {}) =>
  createBurst({
    sources: [
      { name: 'docs', root, followSymlinks: false },
      { name: 'links', root: '/w/links', followSymlinks: o.followSymlinks ?? true },
    ],
    nowMs: () => 1_000,
    ...(o.maxPaths !== undefined ? { maxPaths: o.maxPaths } : {}),
  });

describe('the paths of a burst of events, as the folders its cycle walks', () => {
  it("each path whole (a folder made with files in it) and its parent folder's own entries; none twice", () => {
    const b = burstOf();
    for (const p of ['a/new', 'a/new/x.md', 'a/b.md', 'top.md', 'c/d/e.md']) b.add(`${root}/${p}`);
    b.add('/elsewhere/z.md');
    const scope = b.take();
    expect(scope === null ? null : [...scope]).toEqual([
      [
        'docs',
        [
          { dir: 'a/new', direct: false },
          { dir: 'a/b.md', direct: false },
          { dir: 'top.md', direct: false },
          { dir: 'c/d/e.md', direct: false },
          { dir: 'a', direct: true },
          { dir: '', direct: true },
          { dir: 'c/d', direct: true },
        ],
      ],
    ]);
    // Taken: the next burst starts empty.
    expect(b.take()).toEqual(new Map());
  });

  it("an ignore file's folder whole (its rules hold below it); the root's makes a full cycle; peek() leaves the burst as it is", () => {
    const b = burstOf();
    b.add(`${root}/a/b/.gitignore`);
    b.add(`${root}/c/.kbsyncignore`);
    const scope = b.peek();
    expect(scope === null ? null : scope.get('docs')?.filter((d) => !d.direct)).toEqual([
      { dir: 'a/b', direct: false },
      { dir: 'c', direct: false },
    ]);
    expect(b.take()).toEqual(scope);
    const atRoot = burstOf();
    atRoot.add(`${root}/notes.md`);
    atRoot.add(`${root}/.gitignore`);
    expect(atRoot.peek()).toBe(null);
    expect(atRoot.size()).toBe(0);
  });

  it('a full cycle for an event on a root, a source whose links are followed, too many paths, or after whole()', () => {
    const atRoot = burstOf();
    atRoot.add(root);
    expect(atRoot.take()).toBe(null);
    const links = burstOf();
    links.add('/w/links/a.md');
    expect(links.take()).toBe(null);
    const many = burstOf({ maxPaths: 3 });
    for (let i = 0; i < 4; i++) many.add(`${root}/f${i}.md`);
    expect(many.take()).toBe(null);
    const three = burstOf({ maxPaths: 3 });
    for (let i = 0; i < 3; i++) three.add(`${root}/f${i}.md`);
    expect(three.take()).not.toBe(null);
    const told = burstOf();
    told.add(`${root}/a.md`);
    told.whole();
    expect(told.take()).toBe(null);
  });

  it("settles at the file's ctime (capped at now), at now for a path gone", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-burst-'));
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'f.md'), 'x');
    const ctime = statSync(join(dir, 'sub', 'f.md')).ctimeMs;
    let now = ctime + 80;
    const b = createBurst({ sources: [{ name: 'docs', root: dir, followSymlinks: false }], nowMs: () => now });
    expect(b.add(join(dir, 'sub', 'f.md'))).toBe(ctime);
    expect(b.add(join(dir, 'sub', 'gone.md'))).toBe(now);
    now = ctime - 5_000;
    expect(b.add(join(dir, 'sub', 'f.md'))).toBe(now);
  });

  it('untake puts the last take back, beside what came since (a cycle that waited for its folders to settle)', () => {
    const b = burstOf();
    b.add(`${root}/new`);
    const first = b.take();
    b.add(`${root}/other.md`);
    b.untake();
    const again = b.take();
    expect(again === null ? null : again.get('docs')).toEqual([
      { dir: 'other.md', direct: false },
      { dir: 'new', direct: false },
      { dir: '', direct: true },
    ]);
    expect(first === null ? null : first.get('docs')).toEqual([
      { dir: 'new', direct: false },
      { dir: '', direct: true },
    ]);
    // Once only: a second untake has nothing more to put back.
    b.untake();
    b.untake();
    expect(b.take()).toEqual(again);
    expect(b.take()).toEqual(new Map());
    // A whole burst put back stays whole.
    b.whole();
    expect(b.take()).toBeNull();
    b.untake();
    expect(b.take()).toBeNull();
  });
});

describe("an event's lstat", () => {
  it("hands each file's size and inode on as it is taken (a file still being written is told by its sizes), not a folder's", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-burst-stat-'));
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'a.md'), 'twelve bytes');
    const seen: [string, number, number][] = [];
    const b = createBurst({
      sources: [{ name: 'docs', root: dir, followSymlinks: false }],
      nowMs: Date.now,
      onFileStat: (p, st) => seen.push([p, st.size, st.ino]),
    });

    for (const p of ['a.md', 'sub', 'gone.md']) b.add(join(dir, p));

    expect(seen).toEqual([[join(dir, 'a.md'), 12, statSync(join(dir, 'a.md')).ino]]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('with statPaths false, none: the path is recorded, its settle time is now, nothing is handed on', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-burst-nostat-'));
    writeFileSync(join(dir, 'a.md'), 'twelve bytes');
    const seen: string[] = [];
    const burst = (statPaths: boolean) =>
      createBurst({
        sources: [{ name: 'docs', root: dir, followSymlinks: false }],
        nowMs: () => 9e12,
        onFileStat: (p) => seen.push(p),
        statPaths,
      });
    // The file's ctime is long before "now": a stat'ing burst says so, one that does not says now.
    expect(burst(true).add(join(dir, 'a.md'))).toBeLessThan(9e12);
    expect(seen).toHaveLength(1);
    const paths = burst(false);
    expect(paths.add(join(dir, 'a.md'))).toBe(9e12);
    expect(seen).toHaveLength(1);
    expect(paths.holds('docs', 'a.md')).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });
});
