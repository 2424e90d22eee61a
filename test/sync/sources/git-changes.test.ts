import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { changedSince, syncGitSource } from '../../../src/sync/sources/git.js';
import { commitAll, git, GIT_ENV, gitdir, tempDir, writeTree } from './helpers.js';

beforeEach(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

describe('changedSince', () => {
  it('reports added, modified, deleted and renamed files between two synced commits', async () => {
    const origin = gitdir({
      'a.md': 'alpha\n',
      'b.md': 'a long enough body for rename detection\n'.repeat(5),
      'd.md': 'gone\n',
      'img.png': 'x',
    });
    const stateDir = tempDir();
    const first = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });
    writeTree(origin, { 'renamed/': '' });
    git(origin, ['mv', 'b.md', 'renamed/c.md']);
    git(origin, ['rm', '-q', 'd.md']);
    commitAll(origin, { 'a.md': 'alpha, edited\n', 'e.md': 'new\n' }, 'changes');

    const second = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });
    const changes = await changedSince(second.checkoutDir, first.commit, second.commit);

    expect(changes).toEqual({ added: ['e.md'], modified: ['a.md'], deleted: ['d.md'], renamed: [{ from: 'b.md', to: 'renamed/c.md' }] });
  });

  it('keeps to the subdir: moves across its edge become additions and deletions', async () => {
    const origin = gitdir({ 'docs/in.md': 'moves out\n'.repeat(5), 'other/out.md': 'moves in\n'.repeat(5), 'other/x.md': 'x' });
    const stateDir = tempDir();
    const first = await syncGitSource({ name: 'r', url: origin, ref: 'main', subdir: 'docs' }, { stateDir });
    git(origin, ['mv', 'docs/in.md', 'other/in.md']);
    git(origin, ['mv', 'other/out.md', 'docs/out.md']);
    commitAll(origin, { 'other/x.md': 'changed' }, 'moves');

    const second = await syncGitSource({ name: 'r', url: origin, ref: 'main', subdir: 'docs' }, { stateDir });
    const changes = await changedSince(second.checkoutDir, first.commit, second.commit, 'docs');

    expect(changes).toEqual({ added: ['out.md'], modified: [], deleted: ['in.md'], renamed: [] });
  });

  it('returns null after a force-push rewrote history, and for an unknown commit', async () => {
    const origin = gitdir({ 'a.md': '1' });
    const base = git(origin, ['rev-parse', 'HEAD']).trim();
    const stateDir = tempDir();
    const lost = commitAll(origin, { 'a.md': '2' }, 'to be rewritten');
    const first = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });
    git(origin, ['reset', '-q', '--hard', base]);
    const rewritten = commitAll(origin, { 'a.md': '3' }, 'rewritten');

    const second = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });

    expect(first.commit).toBe(lost);
    expect(second.commit).toBe(rewritten);
    expect(await changedSince(second.checkoutDir, first.commit, second.commit)).toBeNull();
    expect(await changedSince(second.checkoutDir, 'f'.repeat(40), second.commit)).toBeNull();
    expect(await changedSince(second.checkoutDir, base, second.commit)).toEqual({
      added: [],
      modified: ['a.md'],
      deleted: [],
      renamed: [],
    });
  });

  it('returns null for a shallow clone that lacks the old commit', async () => {
    const origin = gitdir({ 'a.md': '1' });
    const old = git(origin, ['rev-parse', 'HEAD']).trim();
    const head = commitAll(origin, { 'a.md': '2' }, 'second');
    const shallow = join(tempDir(), 'shallow');
    git(origin, ['clone', '-q', '--depth', '1', `file://${origin}`, shallow]);

    expect(await changedSince(shallow, old, head)).toBeNull();
  });
});
