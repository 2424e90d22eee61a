import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { scanFolder, type FolderSourceSpec, type ScanResult } from '../../../src/sync/sources/folder.js';
import { WalkAhead, type WalkAheadOptions } from '../../../src/sync/sources/walk-ahead.js';
import { noThreadLeft, tempDir, threadCount, writeTree, type TreeEntry } from './helpers.js';

const spec = (root: string): FolderSourceSpec => ({ name: 'docs', root, include: ['**/*'], exclude: ['skip/**'], followSymlinks: true });

/** A tree with every case the walk decides on: ignore files, globs, secrets, links, unsupported types, folders never walked. */
function mixedTree(files = 1500): string {
  const root = tempDir();
  const entries: Record<string, TreeEntry> = {
    '.gitignore': 'ignored-*.md\nbuild/\n',
    'area-1/.kbsyncignore': 'private.md\n',
    'area-1/private.md': 'no',
    'secret/.env': 'X=1',
    'secret/id_rsa': 'key',
    'skip/a.md': 'excluded by glob',
    'build/out.md': 'ignored folder',
    'node_modules/pkg/readme.md': 'never walked',
    '.git/HEAD': 'ref: refs/heads/main',
    'img.png': 'png',
    'empty/': '',
    'a.md': 'a beside a folder a',
    'a/b.md': 'b',
    'link.md': { symlink: 'a/b.md' },
    'linked-dir': { symlink: 'area-2' },
    'outside.md': { symlink: '/etc/hostname' },
  };
  for (let i = 0; i < files; i++) entries[`area-${i % 7}/part-${i % 3}/doc-${i}.${i % 4 === 0 ? 'TXT' : 'md'}`] = `doc ${i}`;
  for (let i = 0; i < 10; i++) entries[`ignored-${i}.md`] = 'no';
  writeTree(root, entries);
  return root;
}

/** scanFolder with a helper started on `root` (after `before`, if given); the helper is stopped after. */
function scanAhead(root: string, options: WalkAheadOptions = {}): { result: ScanResult; ahead: WalkAhead } {
  const ahead = WalkAhead.start([root], { cores: 2, ...options });
  if (ahead === null) throw new Error('no helper started');
  try {
    return { result: scanFolder(spec(root), { ahead }), ahead };
  } finally {
    ahead.stop();
  }
}

const alone = (root: string): ScanResult => scanFolder(spec(root), { statPool: false });

/**
 * A stand-in helper speaking the same protocol: lists every folder in walk order (as the real one
 * does), then does what `onListing` says with each listing (`k`, `dir`, `names`, `kinds`, `post`,
 * `claims`, `lstatSync` in scope). `beforePost` runs before each listing is posted (the walk cannot
 * have it yet). `after` runs when every root is listed.
 */
function fakeHelper(onListing: string, after = "post({ kind: 'end' });", beforePost = ''): string {
  return `'use strict';
const { workerData: d } = process.getBuiltinModule('node:worker_threads');
const { readdirSync, lstatSync } = process.getBuiltinModule('node:fs');
const post = (m, t = []) => { d.port.postMessage(m, t); Atomics.add(d.ctl, 0, 1); Atomics.notify(d.ctl, 0); };
let k = 0;
for (const root of d.roots) {
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop();
    const keyed = readdirSync(dir, { withFileTypes: true }).map((e) => ({ e, key: e.isDirectory() ? e.name + '/' : e.name }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const names = keyed.map(({ e }) => e.name);
    const kinds = Uint8Array.from(keyed, ({ e }) => (e.isFile() ? 1 : e.isDirectory() ? 2 : e.isSymbolicLink() ? 3 : 0));
    for (let i = names.length - 1; i >= 0; i--) if (kinds[i] === 2 && !d.neverListed.includes(names[i])) stack.push(dir + '/' + names[i]);
    const claims = d.claims;
    ${beforePost}
    post({ kind: 'listing', dir, k, names: names.join('/'), kinds: kinds.slice() });
    ${onListing}
    k++;
  }
}
${after}
`;
}

describe('WalkAhead', () => {
  it('gives the walk the same files, fingerprints and skips as a walk on its own, from its listings and lstats', async () => {
    const root = mixedTree();
    const expected = alone(root);

    // The helper far ahead (it has walked everything before the walk starts), and the two together from the start.
    const ahead = WalkAhead.start([root], { cores: 2 });
    if (ahead === null) throw new Error('no helper started');
    await vi.waitFor(() => expect(ahead.finished()).toBe(true), { timeout: 10_000 });
    const early = scanFolder(spec(root), { ahead });
    ahead.stop();
    const together = scanAhead(root);

    expect(expected.files.length).toBeGreaterThan(1500);
    expect(expected.skipped.map((s) => s.reason)).toEqual(expect.arrayContaining(['ignored', 'secret', 'unsupported', 'symlink']));
    expect(early).toEqual(expected);
    expect(together.result).toEqual(expected);
    expect(ahead.taken.listings).toBeGreaterThan(20);
    expect(ahead.taken.stats).toBeGreaterThan(20);
    expect(together.ahead.taken.listings).toBeGreaterThan(20);
  });

  it('has the walk lstat the folders whose lstats the helper has not started on', () => {
    const root = mixedTree();

    // This helper only lists: the walk claims every folder's lstats.
    const { result, ahead } = scanAhead(root, { helper: () => fakeHelper('') });

    expect(result).toEqual(alone(root));
    expect(ahead.taken.listings).toBeGreaterThan(20);
    expect(ahead.taken.claimed).toBe(ahead.taken.listings);
    expect(ahead.taken.stats).toBe(0);
  });

  it('takes lstats the helper posts after the walk went past their folder', () => {
    const root = mixedTree();
    // Claims every folder's lstats before it posts the listing (the walk can never claim them first),
    // and posts them all only once everything is listed.
    const claim = 'const mine = Atomics.compareExchange(claims, k, 0, 1) === 0;';
    const held = `if (mine) {
      const stats = new Float64Array(names.length * 3).fill(NaN);
      for (let i = 0; i < names.length; i++) {
        if (kinds[i] !== 1 || !names[i].endsWith('.md')) continue;
        const st = lstatSync(dir + '/' + names[i]);
        stats.set([st.size, st.mtimeMs, st.ino], i * 3);
      }
      (globalThis.held ??= []).push({ kind: 'stats', k, stats });
    }`;
    const release = "for (const m of globalThis.held ?? []) post(m); post({ kind: 'end' });";

    const { result, ahead } = scanAhead(root, { helper: () => fakeHelper(held, release, claim) });

    expect(result).toEqual(alone(root));
    expect(ahead.taken.listings).toBeGreaterThan(20);
    expect([ahead.taken.stats, ahead.taken.claimed]).toEqual([ahead.taken.listings, 0]);
  });

  it.each([
    ['claims lstats, then ends without posting them', 'Atomics.compareExchange(claims, k, 0, 1);', "post({ kind: 'end' });"],
    ['claims lstats, then dies', 'Atomics.compareExchange(claims, k, 0, 1);', "throw new Error('boom');"],
    [
      'claims lstats, then hangs',
      'Atomics.compareExchange(claims, k, 0, 1);',
      'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);',
    ],
    ['cannot read any folder', '', "post({ kind: 'end' });"],
  ])('walks on alone, with the same result, when the helper %s', async (what, onListing, after) => {
    const root = mixedTree(300);
    const before = threadCount();
    // The last case posts k -1 for every folder (unreadable there): the walk reads each itself.
    const source =
      what === 'cannot read any folder'
        ? () => fakeHelper('', after).replace("post({ kind: 'listing', dir, k,", "post({ kind: 'listing', dir, k: -1,")
        : () => fakeHelper(onListing, after);

    const { result, ahead } = scanAhead(root, { helper: source, stallMs: 300 });

    expect(result).toEqual(alone(root));
    if (what === 'cannot read any folder') expect(ahead.taken.listings).toBe(0);
    await noThreadLeft(before);
  });

  it('lists files as they were when the helper saw them: a file deleted since is left to the next pass', async () => {
    const root = mixedTree(50);
    const ahead = WalkAhead.start([root], { cores: 2 });
    if (ahead === null) throw new Error('no helper started');
    await vi.waitFor(() => expect(ahead.finished()).toBe(true), { timeout: 10_000 });
    rmSync(join(root, 'a.md'));
    writeFileSync(join(root, 'new.md'), 'made after the helper went by');

    const result = scanFolder(spec(root), { ahead });
    ahead.stop();

    // Nothing is made up: every file listed was there with that fingerprint, at the helper's pass.
    expect(result.files.map((f) => f.path)).toContain('a.md');
    expect(result.files.map((f) => f.path)).not.toContain('new.md');
    expect(alone(root).files.map((f) => f.path)).toContain('new.md');
  });

  it('is told which folders the walk leaves out, and reads no further under them', async () => {
    // An ignored folder that sorts first (as .venv, .cache, build/ often do), far larger than the rest.
    const entries: Record<string, TreeEntry> = { '.gitignore': '.venv/\n', 'src/a.md': 'a', 'src/b/c.md': 'c' };
    for (let i = 0; i < 1000; i++) entries[`.venv/lib/pkg-${i}/sub/readme.md`] = `pkg ${i}`;
    const root = tempDir();
    writeTree(root, entries);

    const ahead = WalkAhead.start([root], { cores: 2 });
    if (ahead === null) throw new Error('no helper started');
    const result = scanFolder(spec(root), { ahead });
    await vi.waitFor(() => expect(ahead.finished()).toBe(true), { timeout: 10_000 });

    expect(result).toEqual(alone(root));
    expect(result.skipped).toContainEqual({
      source: 'docs',
      path: '.venv',
      reason: 'ignored',
      detail: 'matches .gitignore: .venv/',
      size: null,
    });
    expect(ahead.taken.listings).toBe(3); // the root, src and src/b
    // Of the 2,005 folders, the helper listed those it reached before the walk's word came (a few, unless
    // this thread was held up for as long as the helper needs for all of .venv), never all of them.
    expect(ahead.taken.helperListed).toBeGreaterThanOrEqual(3);
    expect(ahead.taken.helperListed).toBeLessThan(2005);
  });

  it('sees at once that its helper died (it cannot post its end), rather than waiting out the stall limit', () => {
    const root = mixedTree(100);

    // Were the exit not seen, the walk would wait a minute for the root's listing, and the test time out.
    // The real helper's exit signal, then an error before it walks.
    const dying = (entry: URL): string => `const { workerData } = process.getBuiltinModule('node:worker_threads');
import(${JSON.stringify(entry.href.replace('walk-ahead-worker', 'walk-ahead'))}).then(({ signalExit }) => {
  signalExit(workerData.ctl);
  throw new Error('died at start');
});`;
    const { result, ahead } = scanAhead(root, { helper: dying, stallMs: 60_000 });

    expect(result).toEqual(alone(root));
    expect(ahead.taken.listings).toBe(0);
  });

  it('is not asked for a root it does not walk', () => {
    const root = mixedTree(100);
    const other = tempDir();
    const ahead = WalkAhead.start([other], { cores: 2 });
    if (ahead === null) throw new Error('no helper started');

    const result = scanFolder(spec(root), { ahead });
    ahead.stop();

    expect(result).toEqual(alone(root));
    expect(ahead.taken.listings).toBe(0);
  });

  it('starts no helper with one core, nor without a root', () => {
    expect(WalkAhead.start([tempDir()], { cores: 1 })).toBeNull();
    expect(WalkAhead.start([], { cores: 2 })).toBeNull();
  });

  it('stops its helper thread', async () => {
    const before = threadCount();
    const root = mixedTree(100);

    scanAhead(root);

    await noThreadLeft(before);
  });
});
