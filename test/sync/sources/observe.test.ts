import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { Source } from '../../../src/config/schema.js';
import { knownFiles, observeSources, type KnownFile } from '../../../src/sync/sources/index.js';
import { GIT_ENV, git, gitdir, tempDir, testdir } from './helpers.js';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';

beforeEach(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

function knownOf(absPath: string, sha256: string): KnownFile {
  const st = statSync(absPath);
  return { size: st.size, mtimeNs: mtimeNsOf(st), inode: st.ino, sha256 };
}

describe('observeSources', () => {
  it('hashes only files whose stat moved; unchanged files keep the known hash without being read', async () => {
    const root = testdir({ 'same.md': 'same', 'changed.md': 'v2', 'new.md': 'new', '.env': 'X=1' });
    const known = new Map<string, KnownFile>([
      // A hash no content has: if it comes back, the file was not read.
      ['notes/same.md', knownOf(join(root, 'same.md'), 'f'.repeat(64))],
      ['notes/changed.md', { ...knownOf(join(root, 'changed.md'), sha('v1')), size: 999 }],
    ]);

    const observation = await observeSources([Source.parse({ name: 'notes', path: root })], {
      stateDir: tempDir(),
      known: knownFiles((source, path) => known.get(`${source}/${path}`)),
    });

    expect(Object.fromEntries(observation.files.map((f) => [f.path, f.sha256]))).toEqual({
      'same.md': 'f'.repeat(64),
      'changed.md': sha('v2'),
      'new.md': sha('new'),
    });
    expect(observation.skipped.map((s) => [s.path, s.reason])).toEqual([['.env', 'secret']]);
    expect(observation.sources).toEqual([{ name: 'notes', kind: 'folder', root, commit: null, scope: null }]);
  });

  it.each([
    { what: 'a few files (hashed in-process)', count: 20 },
    { what: 'enough files to start the hash workers during the walk', count: 1500 },
  ])('hashing while walking gives the same observation as hashing after: $what, with a git source beside', async ({ count }) => {
    const entries: Record<string, string> = { 'same.md': 'same', 'changed.md': 'v2', 'logo.png': 'png', '.env': 'X=1' };
    for (let i = 0; i < count; i++) entries[`d${i % 7}/f${i}.txt`] = `file ${i}\n`.repeat(1 + (i % 5));
    const root = testdir(entries);
    const origin = gitdir({ 'docs/b.md': 'b' });
    const known = new Map<string, KnownFile>([
      ['notes/same.md', knownOf(join(root, 'same.md'), 'f'.repeat(64))],
      ['notes/changed.md', { ...knownOf(join(root, 'changed.md'), sha('v1')), size: 999 }],
    ]);
    const sources = [Source.parse({ name: 'notes', path: root }), Source.parse({ name: 'repo', git: { url: origin, subdir: 'docs' } })];
    const lookup = knownFiles((source, path) => known.get(`${source}/${path}`));

    const stateDir = tempDir(); // one git checkout for both passes
    const after = await observeSources(sources, { stateDir, known: lookup });
    const during = await observeSources(sources, { stateDir, known: Promise.resolve(lookup), hashWhileWalking: true });

    expect(during.files).toEqual(after.files);
    expect(during.skipped).toEqual(after.skipped);
    expect(during.files.find((f) => f.path === 'same.md')?.sha256).toBe('f'.repeat(64));
    expect(during.files.find((f) => f.path === 'changed.md')?.sha256).toBe(sha('v2'));
    expect(during.files.find((f) => f.path === 'd3/f3.txt')?.sha256).toBe(sha('file 3\n'.repeat(4)));
    expect(during.files).toHaveLength(count + 3);
  });

  it.each([
    { what: 'hashed after the walk, in-process', hashWhileWalking: false, count: 5 },
    { what: 'hashed while walking, in-process', hashWhileWalking: true, count: 5 },
    { what: 'hashed after the walk, by the worker threads', hashWhileWalking: false, count: 1500 },
    { what: 'hashed while walking, by the worker threads', hashWhileWalking: true, count: 1500 },
  ])('onHashProgress counts each file hashed up to the number to hash, and no more: $what', async ({ hashWhileWalking, count }) => {
    const entries: Record<string, string> = { 'same.md': 'same' };
    for (let i = 0; i < count; i++) entries[`d${i % 7}/f${i}.txt`] = `file ${i}\n`;
    const root = testdir(entries);
    const known = new Map<string, KnownFile>([['notes/same.md', knownOf(join(root, 'same.md'), 'f'.repeat(64))]]);
    const calls: [number, number][] = [];

    await observeSources([Source.parse({ name: 'notes', path: root })], {
      stateDir: tempDir(),
      known: knownFiles((source, path) => known.get(`${source}/${path}`)),
      hashWhileWalking,
      onHashProgress: (done, total) => calls.push([done, total]),
    });

    // same.md kept its known hash: only the others count.
    expect(calls.at(-1)).toEqual([count, count]);
    expect(calls.every(([done, total], i) => done <= total && (i === 0 || done > (calls[i - 1] as [number, number])[0]))).toBe(true);
  });

  it('observes folder and git sources together, pinning the git source to its commit', async () => {
    const folder = testdir({ 'a.md': 'a' });
    const origin = gitdir({ 'docs/b.md': 'b', 'docs/c.png': 'c', 'top.md': 't' });
    const head = git(origin, ['rev-parse', 'HEAD']).trim();
    const stateDir = tempDir();

    const observation = await observeSources(
      [Source.parse({ name: 'notes', path: folder }), Source.parse({ name: 'repo', git: { url: origin, subdir: 'docs' } })],
      { stateDir, known: knownFiles(() => undefined) },
    );

    expect(observation.files.map((f) => [f.source, f.path, f.sha256])).toEqual([
      ['notes', 'a.md', sha('a')],
      ['repo', 'b.md', sha('b')],
    ]);
    expect(observation.files[1]?.absPath).toBe(join(stateDir, 'git', 'repo', 'docs', 'b.md'));
    expect(observation.skipped.map((s) => [s.source, s.path, s.reason])).toEqual([['repo', 'c.png', 'unsupported']]);
    expect(observation.sources).toEqual([
      { name: 'notes', kind: 'folder', root: folder, commit: null, scope: null },
      { name: 'repo', kind: 'git', root: join(stateDir, 'git', 'repo', 'docs'), commit: head, scope: `${origin}\ndocs` },
    ]);
  });

  it('gives sha256 null (deferred) for a file that changes while it is hashed', async () => {
    const root = testdir({ 'busy.md': 'writing', 'calm.md': 'calm' });

    const observation = await observeSources([Source.parse({ name: 'n', path: root })], {
      stateDir: tempDir(),
      known: knownFiles(() => undefined),
      hash: { mode: 'in-process', beforeRestat: (p) => p.endsWith('busy.md') && appendFileSync(p, '...') },
    });

    expect(Object.fromEntries(observation.files.map((f) => [f.path, f.sha256]))).toEqual({ 'busy.md': null, 'calm.md': sha('calm') });
  });

  it('observes a folder with more skipped files than a call takes arguments (250k images)', async () => {
    // The skip entries were once appended with push(...entries): past V8's argument limit, "Maximum call stack size exceeded".
    // In memory where the machine has it: a quarter million files are slow to make on a disk, quick in /dev/shm.
    const root = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/kbsync-big-') : tempDir();
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    for (let d = 0; d < 250; d++) {
      mkdirSync(join(root, `img-${d}`));
      for (let f = 0; f < 1000; f++) writeFileSync(join(root, `img-${d}`, `${f}.png`), '');
    }
    writeFileSync(join(root, 'index.md'), '# images');

    const observation = await observeSources([Source.parse({ name: 'media', path: root })], {
      stateDir: tempDir(),
      known: knownFiles(() => undefined),
    });

    expect(observation.files.map((f) => f.path)).toEqual(['index.md']);
    expect(observation.skipped).toHaveLength(250_000);
    expect(observation.skipped.every((s) => s.reason === 'unsupported')).toBe(true);
  }, 60_000);

  it('fails with source_unavailable when a folder source is gone', async () => {
    const root = join(tempDir(), 'missing');

    await expect(
      observeSources([Source.parse({ name: 'x', path: root })], { stateDir: tempDir(), known: knownFiles(() => undefined) }),
    ).rejects.toMatchObject({
      code: 'source_unavailable',
    });
  });
});
