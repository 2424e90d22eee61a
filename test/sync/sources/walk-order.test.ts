import { describe, expect, it } from 'vitest';
import { scanFolder, type FolderSourceSpec } from '../../../src/sync/sources/folder.js';
import { observeSources } from '../../../src/sync/sources/index.js';
import { WalkAhead } from '../../../src/sync/sources/walk-ahead.js';
import { isStrictlyInPathOrder } from '../../../src/sync/tracked/keys.js';
import { createPrng } from '../../helpers/prng.js';
import { gitdir, testdir, type TreeEntry } from './helpers.js';
import type { Source } from '../../../src/config/schema.js';

const spec = (root: string, followSymlinks = false): FolderSourceSpec => ({
  name: 'docs',
  root,
  include: ['**/*'],
  exclude: [],
  followSymlinks,
});

/** Names that sort around "/" and each other: "-" and "." sort before it, "0" and letters after, and non-ASCII beyond. */
const PIECES = ['a', 'a.md', 'a-b', 'a0', 'b', 'B', 'é', '日本', '😀', 'x.y', 'a.', '-', '0'];

function randomTree(seed: number): Record<string, TreeEntry> {
  const { int } = createPrng(seed);
  const pick = (): string => PIECES[int(0, PIECES.length - 1)] as string;
  const entries: Record<string, TreeEntry> = {};
  for (let i = 0; i < 60; i++) {
    const depth = int(1, 3);
    const dirs = Array.from({ length: depth - 1 }, () => `${pick()}`);
    entries[[...dirs, `${pick()}${i % 2 === 0 ? '.md' : '.txt'}`].join('/')] = `file ${i}`;
  }
  // Writing a file where a folder of the same name was written (or the reverse) fails: keep the first.
  const kept: Record<string, TreeEntry> = {};
  const taken = new Set<string>();
  for (const [path, content] of Object.entries(entries)) {
    const parts = path.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    if (prefixes.some((p, i) => (i < parts.length - 1 ? taken.has(`f:${p}`) : taken.has(`d:${p}`) || taken.has(`f:${p}`)))) continue;
    prefixes.forEach((p, i) => taken.add(i < parts.length - 1 ? `d:${p}` : `f:${p}`));
    kept[path] = content;
  }
  return kept;
}

describe('a folder walk says when its files are in path order', () => {
  it.each(Array.from({ length: 12 }, (_, seed) => seed))(
    'and they are, whatever the names (seed %i), with or without a helper walking ahead',
    (seed) => {
      const root = testdir(randomTree(seed));

      const alone = scanFolder(spec(root), { statPool: false });
      const ahead = WalkAhead.start([root], { cores: 2 });
      const helped = scanFolder(spec(root), { ahead });
      ahead?.stop();

      expect(alone.files.length).toBeGreaterThan(10);
      expect(alone.inPathOrder).toBe(true);
      expect(isStrictlyInPathOrder(alone.files)).toBe(true);
      expect(helped).toEqual(alone);
    },
  );

  it('does not claim it once it followed a link to a folder, whose files sort under the link as a file name', () => {
    // "docs" (a link) sorts before "docs-old.md", but its files ("docs/...") sort after it.
    const root = testdir({ 'real/x.md': 'x', docs: { symlink: 'real' }, 'docs-old.md': 'old' });

    const followed = scanFolder(spec(root, true), { statPool: false });
    const notFollowed = scanFolder(spec(root, false), { statPool: false });

    expect(followed.files.map((f) => f.path)).toEqual(['docs/x.md', 'docs-old.md', 'real/x.md']);
    expect(isStrictlyInPathOrder(followed.files)).toBe(false);
    expect(followed.inPathOrder).toBe(false);
    expect(notFollowed.inPathOrder).toBe(true);
  });

  it('passes the fact on through observeSources for folder sources only', async () => {
    const folder = testdir({ 'a.md': 'a', 'b/c.md': 'c' });
    const repo = gitdir({ 'r.md': 'r' });
    const known = { knownSha256: () => null };
    const folderSource = { name: 'docs', path: folder, include: ['**/*'], exclude: [], followSymlinks: false } as unknown as Source;
    const gitSource = {
      name: 'repo',
      git: { url: repo, ref: 'main' },
      include: ['**/*'],
      exclude: [],
      followSymlinks: false,
    } as unknown as Source;

    const folders = await observeSources([folderSource], { stateDir: testdir({}), known });
    const mixed = await observeSources([folderSource, gitSource], { stateDir: testdir({}), known });

    expect(folders.inPathOrder).toBe(true);
    expect(mixed.inPathOrder).toBe(false);
    expect(mixed.files.map((f) => f.path)).toEqual(['a.md', 'b/c.md', 'r.md']);
  });
});
