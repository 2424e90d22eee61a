import { describe, expect, it } from 'vitest';
import { scanFolder, type ScanResult, type ScopeDir } from '../../../src/sync/sources/folder.js';
import { testdir } from './helpers.js';

const spec = (root: string, exclude: string[] = []) => ({ name: 'docs', root, include: ['**/*'], exclude, followSymlinks: false });
const scoped = (root: string, scope: ScopeDir[], exclude: string[] = []): ScanResult => scanFolder(spec(root, exclude), { scope });
const paths = (r: ScanResult): string[] => r.files.map((f) => f.path);

describe('scanFolder with a scope (the cycle of a burst of events in kbsync watch)', () => {
  const tree = {
    'top.md': 't',
    'a/one.md': '1',
    'a/sub/two.md': '2',
    'a/sub/deeper/three.md': '3',
    'b/four.md': '4',
    'b/build/out.md': 'o',
    'b/.gitignore': 'build/\n*.tmp.md\n',
    'b/keep.tmp.md': 'k',
    '.gitignore': 'secret-area/\n',
    'secret-area/x/hidden.md': 'h',
  };

  it("walks a folder's own entries (direct) or the whole folder, in path order", () => {
    const root = testdir(tree);
    expect(paths(scoped(root, [{ dir: 'a', direct: true }]))).toEqual(['a/one.md']);
    expect(paths(scoped(root, [{ dir: 'a', direct: false }]))).toEqual(['a/one.md', 'a/sub/deeper/three.md', 'a/sub/two.md']);
    expect(paths(scoped(root, [{ dir: '', direct: true }]))).toEqual(['top.md']);
    expect(
      paths(
        scoped(root, [
          { dir: 'b', direct: true },
          { dir: 'a/sub', direct: false },
        ]),
      ),
    ).toEqual(['a/sub/deeper/three.md', 'a/sub/two.md', 'b/four.md']);
  });

  it('holds a scoped folder to the rules the full walk holds it to: the ignore files above it, the excludes', () => {
    const root = testdir(tree);
    const full = scanFolder(spec(root, ['a/sub/deeper/**']));
    // An ignore file of the root leaves the folder out, as the full walk does: no files, the same skip entry.
    const hidden = scoped(root, [{ dir: 'secret-area/x', direct: false }]);
    expect(paths(hidden)).toEqual([]);
    expect(hidden.skipped).toEqual(full.skipped.filter((s) => s.path === 'secret-area'));
    // b's own .gitignore holds in b/build, which is walked (when named) as the full walk leaves it.
    expect(paths(scoped(root, [{ dir: 'b/build', direct: false }]))).toEqual([]);
    expect(paths(scoped(root, [{ dir: 'b', direct: true }]))).toEqual(['b/four.md']);
    expect(paths(scoped(root, [{ dir: 'a/sub', direct: false }], ['a/sub/deeper/**']))).toEqual(['a/sub/two.md']);
    expect(paths(full).filter((p) => p.startsWith('a/sub/'))).toEqual(['a/sub/two.md']);
  });

  it('a folder that is gone, or is a file now, gives nothing and no error', () => {
    const root = testdir(tree);
    const r = scoped(root, [
      { dir: 'gone', direct: false },
      { dir: 'top.md', direct: false },
      { dir: 'a/missing/x', direct: true },
    ]);
    expect(r.files).toEqual([]);
    expect(r.skipped).toEqual([]);
  });
});
