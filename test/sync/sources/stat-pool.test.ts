import { lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanFolder, type FolderSourceSpec, type ScanOptions } from '../../../src/sync/sources/folder.js';
import { StatPool, type StatPoolOptions } from '../../../src/sync/sources/stat-pool.js';
import { noThreadLeft, tempDir, threadCount, writeTree } from './helpers.js';

type Call = { kind: 'file'; size: number; mtimeMs: number; ino: number } | { kind: 'gone' } | { kind: 'error'; message: string };

/** Runs every path through a pool; returns each path's one call (a path called twice fails the test). */
function statAll(paths: readonly string[], options: StatPoolOptions): Map<string, Call> {
  return statAllIn(paths, options).calls;
}

function statAllIn(paths: readonly string[], options: StatPoolOptions): { calls: Map<string, Call>; pool: StatPool<string> } {
  const calls = new Map<string, Call>();
  const record = (path: string, call: Call): void => {
    expect(calls.has(path), `${path} answered twice`).toBe(false);
    calls.set(path, call);
  };
  const pool = new StatPool<string>(
    {
      file: (p, size, mtimeMs, ino) => record(p, { kind: 'file', size, mtimeMs, ino }),
      gone: (p) => record(p, { kind: 'gone' }),
      error: (p, message) => record(p, { kind: 'error', message }),
    },
    options,
  );
  for (const p of paths) pool.lstat(p, p);
  pool.finish();
  return { calls, pool };
}

/** `count` files of `size` bytes each over a few folders, plus the odd cases: gone, a folder, a path through a file. */
function mixedPaths(count: number): { paths: string[]; expected: Map<string, Call> } {
  const root = tempDir('kbsync-stat-');
  const paths: string[] = [];
  const expected = new Map<string, Call>();
  for (let i = 0; i < count; i++) {
    const dir = join(root, `d${i % 7}`);
    mkdirSync(dir, { recursive: true });
    const abs = join(dir, `f${i}.md`);
    writeFileSync(abs, 'x'.repeat(i % 50));
    const st = lstatSync(abs);
    paths.push(abs);
    expected.set(abs, { kind: 'file', size: st.size, mtimeMs: st.mtimeMs, ino: st.ino });
    if (i % 300 === 0) {
      const missing = join(root, `missing-${i}.md`);
      const folder = join(root, `folder-${i}`);
      mkdirSync(folder);
      const throughFile = join(abs, 'below.md'); // ENOTDIR: an error, not "gone"
      paths.push(missing, folder, throughFile);
      expected.set(missing, { kind: 'gone' });
      expected.set(folder, { kind: 'gone' });
      expected.set(throughFile, { kind: 'error', message: expect.stringContaining('ENOTDIR') as unknown as string });
    }
  }
  return { paths, expected };
}

describe('StatPool', () => {
  it('gives every path exactly one answer, the same whether the helper thread does it or this one', () => {
    const { paths, expected } = mixedPaths(3000);

    const shared = statAll(paths, { workerAfter: 0 });
    const here = statAll(paths, { workerAfter: Number.POSITIVE_INFINITY });

    expect(shared).toEqual(expected);
    expect(here).toEqual(expected);
  });

  it('really has the helper thread answer (a dead one would go unnoticed: this thread would do it all)', () => {
    const { paths, expected } = mixedPaths(3000);

    const { calls, pool } = statAllIn(paths, { workerAfter: 0, helperGraceMs: 10_000 });

    expect(calls).toEqual(expected);
    expect(pool.helperAnswers).toBeGreaterThan(0);
  });

  it('starts no helper with one core', () => {
    const { paths, expected } = mixedPaths(2000);
    const before = threadCount();

    const { calls, pool } = statAllIn(paths, { workerAfter: 0, cores: 1 });

    expect(calls).toEqual(expected);
    expect(pool.helperAnswers).toBe(0);
    expect(threadCount()).toBeLessThanOrEqual(before); // a helper's thread outlives finish() for a moment: none was made
  });

  it('stops its helper thread when finished', async () => {
    const { paths } = mixedPaths(2000);
    const before = threadCount();
    const pool = new StatPool<string>(
      { file: () => {}, gone: () => {}, error: () => {} },
      { workerAfter: 0, cores: 2, helperGraceMs: 10_000 },
    );

    for (const p of paths) pool.lstat(p, p);
    const during = threadCount();
    pool.finish();

    // cores: 2 whatever this machine has: on one core no helper would start, and nothing would be stopped.
    expect(during).toBeGreaterThan(before);
    expect(pool.helperAnswers).toBeGreaterThan(0);
    await noThreadLeft(before);
  });

  it.each([
    ['never answers', "const { workerData } = process.getBuiltinModule('node:worker_threads'); workerData.port.on('message', () => {});"],
    [
      'crashes on its first batch',
      "const { workerData } = process.getBuiltinModule('node:worker_threads'); workerData.port.on('message', () => { throw new Error('boom'); });",
    ],
    [
      'answers with the wrong number of results',
      `const { workerData } = process.getBuiltinModule('node:worker_threads');
      workerData.port.on('message', ({ id }) => {
        workerData.port.postMessage({ id, ok: true, value: { stats: new Float64Array(3), errors: [] } });
      });`,
    ],
  ])('does the work itself when the helper %s', async (_what, source) => {
    const { paths, expected } = mixedPaths(1500);
    const before = threadCount();

    const calls = statAll(paths, { workerAfter: 0, helper: () => source });

    expect(calls).toEqual(expected);
    await noThreadLeft(before);
  });
});

describe('StatPool with keepHelper (kbsync watch walks every few minutes)', () => {
  it('keeps its helper thread for the next walk that keeps it, whose answers are all right', async () => {
    const first = mixedPaths(3000);
    const second = mixedPaths(3000);
    const before = threadCount();

    // No grace: the first walk ends with batches the helper has not answered yet, done here instead.
    expect(statAll(first.paths, { workerAfter: 0, cores: 2, keepHelper: true })).toEqual(first.expected);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(threadCount()).toBeGreaterThan(before); // kept, not stopped

    // A walk that would never start a helper of its own (workerAfter: infinite) is answered by the kept one.
    const { calls, pool } = statAllIn(second.paths, {
      workerAfter: Number.POSITIVE_INFINITY,
      cores: 2,
      keepHelper: true,
      helperGraceMs: 10_000,
    });
    expect(calls).toEqual(second.expected);
    expect(pool.helperAnswers).toBeGreaterThan(0);
  });
});

describe('scanFolder with a stat helper', () => {
  const spec = (root: string): FolderSourceSpec => ({ name: 'docs', root, include: ['**/*'], exclude: ['skip/**'], followSymlinks: true });
  const scan = (root: string, options: ScanOptions) => scanFolder(spec(root), options);

  it('finds the same files, fingerprints and skips as a walk that lstats everything itself', () => {
    const root = tempDir();
    const entries: Record<string, string | { symlink: string }> = {
      '.gitignore': 'ignored-*.md\n',
      'secret/.env': 'X=1',
      'skip/a.md': 'a',
      'img.png': 'png',
    };
    for (let i = 0; i < 2500; i++) entries[`area-${i % 9}/part-${i % 4}/doc-${i}.${i % 3 === 0 ? 'txt' : 'md'}`] = `doc ${i}`;
    for (let i = 0; i < 20; i++) entries[`ignored-${i}.md`] = 'no';
    entries['link.md'] = { symlink: 'area-0/part-0/doc-0.txt' };
    writeTree(root, entries);

    const shared = scan(root, { statPool: { workerAfter: 0 } });
    const alone = scan(root, { statPool: false });

    expect(shared.files.length).toBeGreaterThan(2500);
    expect(shared).toEqual(alone);
  });

  /** A helper that answers every path with `code` (-1 gone, -2 failed): the first batches (over 512 paths) always go to it. */
  const fakeHelper = (code: number): string => `const { workerData } = process.getBuiltinModule('node:worker_threads');
    workerData.port.on('message', ({ id, req: paths }) => {
      const stats = new Float64Array(paths.length * 3);
      const errors = [];
      for (let i = 0; i < paths.length; i++) { stats[i * 3] = ${code}; if (${code} === -2) errors.push([i, 'EACCES: permission denied, lstat']); }
      workerData.port.postMessage({ id, ok: true, value: { stats, errors } }, [stats.buffer]);
    });`;
  const numbered = (): { root: string; all: string[] } => {
    const root = tempDir();
    const entries: Record<string, string> = {};
    for (let i = 0; i < 1200; i++) entries[`docs/${String(i).padStart(4, '0')}.md`] = `doc ${i}`;
    writeTree(root, entries);
    return { root, all: Object.keys(entries) };
  };

  it('leaves out files gone by the time of their lstat (the next pass sees them), and keeps every other one whole', () => {
    const { root, all } = numbered();

    const result = scan(root, { statPool: { workerAfter: 0, helperGraceMs: 10_000, helper: () => fakeHelper(-1) } });

    const found = result.files.map((f) => f.path);
    expect(found.length).toBeLessThanOrEqual(all.length - 512);
    expect(found).toEqual(all.slice(all.length - found.length));
    for (const f of result.files) {
      const st = lstatSync(f.absPath);
      expect([f.size, f.inode]).toEqual([st.size, st.ino]);
    }
    expect(result.skipped).toEqual([]);
  });

  it('lists a file whose lstat fails as unreadable, with the error', () => {
    const { root, all } = numbered();

    const result = scan(root, { statPool: { workerAfter: 0, helperGraceMs: 10_000, helper: () => fakeHelper(-2) } });

    expect(result.skipped.length).toBeGreaterThanOrEqual(512);
    expect(result.skipped.length + result.files.length).toBe(all.length);
    expect(result.skipped[0]).toEqual({
      source: 'docs',
      path: 'docs/0000.md',
      reason: 'unreadable',
      detail: 'EACCES: permission denied, lstat',
      size: null,
    });
  });
});
