import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Source } from '../../../src/config/schema.js';
import { knownFiles, observeSources, type KnownFile } from '../../../src/sync/sources/index.js';
import { GIT_ENV, commitAll, git, gitdir, tempDir } from './helpers.js';

beforeEach(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
/** A hash no content has: when it comes back, the file was not read. */
const NOT_READ = 'f'.repeat(64);
/** A fingerprint no file on disk has: stat alone would say "changed". */
const staleKnown = (sha256: string): KnownFile => ({ size: 1, mtimeNs: '1', inode: 1, sha256 });

describe('observeSources on a git source with a last synced commit', () => {
  it('hashes only what git diff reports as changed, even after a fresh clone moved every mtime and inode', async () => {
    const origin = gitdir({ 'docs/a.md': 'a', 'docs/b.md': 'b', 'docs/old.md': 'moved' });
    const synced = git(origin, ['rev-parse', 'HEAD']).trim();
    commitAll(origin, { 'docs/b.md': 'b2' }, 'change b');
    git(origin, ['mv', 'docs/old.md', 'docs/new.md']);
    git(origin, ['commit', '-qm', 'move']);
    const stateDir = tempDir();
    const source = Source.parse({ name: 'repo', git: { url: origin, subdir: 'docs' } });
    const known = new Map<string, KnownFile>([
      ['a.md', staleKnown(NOT_READ)],
      ['b.md', staleKnown(NOT_READ)],
      ['old.md', staleKnown(sha('moved'))],
    ]);
    const observe = (lastSyncedCommit: string | null) =>
      observeSources([source], { stateDir, known: knownFiles((_s, path) => known.get(path)), lastSyncedCommit: () => lastSyncedCommit });

    const withDiff = await observe(synced);
    rmSync(join(stateDir, 'git'), { recursive: true, force: true });
    const withoutDiff = await observe(null);

    const shas = (o: Awaited<ReturnType<typeof observe>>) => Object.fromEntries(o.files.map((f) => [f.path, f.sha256]));
    expect(shas(withDiff)).toEqual({ 'a.md': NOT_READ, 'b.md': sha('b2'), 'new.md': sha('moved') });
    expect(shas(withoutDiff)).toEqual({ 'a.md': sha('a'), 'b.md': sha('b2'), 'new.md': sha('moved') });
  });

  it('falls back to stat and hashing when the last synced commit is not in the history (force-push)', async () => {
    const origin = gitdir({ 'a.md': 'a' });
    const stateDir = tempDir();
    const source = Source.parse({ name: 'repo', git: { url: origin } });

    const observation = await observeSources([source], {
      stateDir,
      known: knownFiles(() => staleKnown(NOT_READ)),
      lastSyncedCommit: () => '0123456789abcdef0123456789abcdef01234567',
    });

    expect(observation.files.map((f) => f.sha256)).toEqual([sha('a')]);
  });
});
