import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { syncGitSource, type GitScanResult } from '../../../src/sync/sources/git.js';
import { commitAll, git, GIT_ENV, gitdir, tempDir, writeTree } from './helpers.js';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';

beforeEach(() => {
  for (const [key, value] of Object.entries(GIT_ENV)) vi.stubEnv(key, value);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const paths = (r: GitScanResult): string[] => r.files.map((f) => f.path).sort();

describe('syncGitSource', () => {
  it("clones into stateDir/git/<name>, pins HEAD to the default branch and lists files with their stat (unsupported ones unstat'ed)", async () => {
    const origin = gitdir({ 'a.md': 'a', 'docs/b.txt': 'b', 'logo.png': 'png', '.env': 'KEY=1', 'secrets.yaml': 'k: v' });
    const head = git(origin, ['rev-parse', 'HEAD']).trim();
    const stateDir = tempDir();

    const result = await syncGitSource({ name: 'repo', url: origin, ref: 'HEAD' }, { stateDir });

    expect(result.commit).toBe(head);
    expect(result.checkoutDir).toBe(join(stateDir, 'git', 'repo'));
    expect(result.root).toBe(result.checkoutDir);
    expect(paths(result)).toEqual(['a.md', 'docs/b.txt']);
    const st = statSync(join(result.root, 'docs/b.txt'));
    expect(result.files.find((f) => f.path === 'docs/b.txt')).toEqual({
      source: 'repo',
      path: 'docs/b.txt',
      absPath: join(result.root, 'docs/b.txt'),
      size: 1,
      mtimeNs: mtimeNsOf(st),
      inode: st.ino,
    });
    expect(result.skipped.map((s) => [s.path, s.reason, s.size]).sort()).toEqual([
      ['.env', 'secret', null],
      ['logo.png', 'unsupported', null],
      ['secrets.yaml', 'secret', null],
    ]);
    expect(git(result.checkoutDir, ['status', '--porcelain', '--ignored'])).toBe('');
  });

  it('follows a branch, a tag and a commit id, and reuses the existing checkout', async () => {
    const origin = gitdir({ 'a.md': 'v1' });
    const v1 = git(origin, ['rev-parse', 'HEAD']).trim();
    git(origin, ['tag', 'v1']);
    git(origin, ['checkout', '-q', '-b', 'next']);
    const next = commitAll(origin, { 'a.md': 'v2' }, 'next');
    git(origin, ['checkout', '-q', 'main']);
    const stateDir = tempDir();

    const onBranch = await syncGitSource({ name: 'r', url: origin, ref: 'next' }, { stateDir });
    const onTag = await syncGitSource({ name: 'r', url: origin, ref: 'v1' }, { stateDir });
    const onCommit = await syncGitSource({ name: 'r', url: origin, ref: next }, { stateDir });

    expect([onBranch.commit, onTag.commit, onCommit.commit]).toEqual([next, v1, next]);
    expect(onTag.files.map((f) => f.size)).toEqual([2]);
  });

  it('clones afresh over what a clone cut short left (a .partial folder, or a folder with no .git)', async () => {
    const origin = gitdir({ 'a.md': 'a' });
    const stateDir = tempDir();
    const checkout = join(stateDir, 'git', 'repo');
    mkdirSync(join(`${checkout}.partial`, '.git'), { recursive: true });
    writeFileSync(join(`${checkout}.partial`, '.git', 'HEAD'), 'garbage');
    mkdirSync(checkout, { recursive: true });
    writeFileSync(join(checkout, 'stray.md'), 'not from the repository');

    const result = await syncGitSource({ name: 'repo', url: origin, ref: 'HEAD' }, { stateDir });

    expect(paths(result)).toEqual(['a.md']);
    expect(existsSync(`${checkout}.partial`)).toBe(false);
    expect(existsSync(join(checkout, 'stray.md'))).toBe(false);
    expect(git(checkout, ['rev-parse', 'HEAD']).trim()).toBe(git(origin, ['rev-parse', 'HEAD']).trim());
  });

  it('fails with git_failed when the branch it follows is deleted on the remote, rather than staying on its last commit', async () => {
    const origin = gitdir({ 'a.md': 'one' });
    const stateDir = tempDir();
    await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });
    git(origin, ['branch', '-q', '-m', 'main', 'trunk']);
    commitAll(origin, { 'a.md': 'two' }, 'on trunk');

    await expect(syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir })).rejects.toMatchObject({
      code: 'git_failed',
      message: expect.stringContaining('ref "main" is not a branch, tag or commit'),
    });
    const trunk = await syncGitSource({ name: 'r', url: origin, ref: 'trunk' }, { stateDir });
    expect(trunk.commit).toBe(git(origin, ['rev-parse', 'trunk']).trim());
  });

  it('clears the lock files a killed git left in its checkout, and checks out the new commit', async () => {
    const origin = gitdir({ 'a.md': 'one' });
    const stateDir = tempDir();
    const first = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });
    for (const lock of ['index.lock', 'HEAD.lock']) writeFileSync(join(first.checkoutDir, '.git', lock), '');
    const head = commitAll(origin, { 'a.md': 'two' }, 'second');

    const second = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });

    expect(second.commit).toBe(head);
    expect(existsSync(join(first.checkoutDir, '.git', 'index.lock'))).toBe(false);
  });

  it('fails with git_failed for an unknown ref', async () => {
    const origin = gitdir({ 'a.md': '' });

    await expect(syncGitSource({ name: 'r', url: origin, ref: 'no-such-branch' }, { stateDir: tempDir() })).rejects.toMatchObject({
      code: 'git_failed',
      message: expect.stringContaining('"no-such-branch" is not a branch, tag or commit'),
    });
  });

  it('never puts credentials from the URL in its errors', async () => {
    const url = 'http://kbsync-user:s3cr3t-token@127.0.0.1:9/repo.git';

    const error = await syncGitSource({ name: 'r', url, ref: 'HEAD' }, { stateDir: tempDir() }).catch((e: unknown) => e);

    expect(error).toMatchObject({ code: 'git_failed', message: expect.stringContaining('source "r": git clone failed') });
    const text = `${String(error)} ${String((error as Error).cause)}`;
    expect(text).not.toContain('s3cr3t-token');
    expect(text).toContain('127.0.0.1');
  });

  it('refuses a name that is not one folder under stateDir/git, and removes nothing', async () => {
    const origin = gitdir({ 'a.md': '' });
    const stateDir = tempDir();
    writeFileSync(join(stateDir, 'state.db'), 'kept');

    for (const name of ['..', '.', 'a/../..']) {
      await expect(syncGitSource({ name, url: origin, ref: 'main' }, { stateDir })).rejects.toMatchObject({
        code: 'source_unavailable',
        message: expect.stringContaining('must name one folder under'),
      });
    }
    expect(readdirSync(stateDir)).toEqual(['state.db']);
  });

  it('refuses a ref or URL that git would read as an option', async () => {
    await expect(
      syncGitSource({ name: 'r', url: '--upload-pack=touch /tmp/x', ref: 'HEAD' }, { stateDir: tempDir() }),
    ).rejects.toMatchObject({ code: 'source_unavailable' });
    await expect(syncGitSource({ name: 'r', url: '/x', ref: '--output=/tmp/x' }, { stateDir: tempDir() })).rejects.toMatchObject({
      code: 'source_unavailable',
    });
  });

  it('keeps to the subdir, with paths relative to it, and honours .kbsyncignore', async () => {
    const origin = gitdir({
      'top.md': '',
      'docs/a.md': '',
      'docs/.kbsyncignore': 'drafts/\n',
      'docs/drafts/d.md': '',
      'docs/sub/b.md': '',
    });

    const result = await syncGitSource({ name: 'r', url: origin, ref: 'main', subdir: 'docs/' }, { stateDir: tempDir() });

    expect(result.root).toBe(join(result.checkoutDir, 'docs'));
    expect(result.subdir).toBe('docs');
    expect(paths(result)).toEqual(['a.md', 'sub/b.md']);
    expect(result.skipped).toEqual(
      expect.arrayContaining([
        { source: 'r', path: 'drafts/d.md', reason: 'ignored', detail: 'matches .kbsyncignore: drafts/', size: null },
      ]),
    );
  });

  describe('symbolic links committed to the repository', () => {
    const linked = (): string =>
      gitdir({
        'real.md': '# real',
        '.env': 'API_KEY=abc',
        'node_modules/p/README.md': '# vendored',
        'team/.kbsyncignore': 'private.md\n',
        'team/private.md': '# private',
        'drafts/d.md': '# draft',
        'link.md': { symlink: 'real.md' },
        'leak.md': { symlink: '.git/config' },
        'env.md': { symlink: '.env' },
        'pkg.md': { symlink: 'node_modules/p/README.md' },
        'priv.md': { symlink: 'team/private.md' },
        'draft.md': { symlink: 'drafts/d.md' },
        'hosts.md': { symlink: '/etc/hosts' },
      });
    const reasons = (r: GitScanResult): Record<string, string> => Object.fromEntries(r.skipped.map((s) => [s.path, s.reason]));
    const detail = (r: GitScanResult, path: string): string | undefined => r.skipped.find((s) => s.path === path)?.detail;

    it('are not followed by default; a committed node_modules is listed once as never synced', async () => {
      const result = await syncGitSource({ name: 'r', url: linked(), ref: 'main', exclude: ['drafts/**'] }, { stateDir: tempDir() });

      expect(paths(result)).toEqual(['real.md']);
      for (const link of ['link.md', 'leak.md', 'env.md', 'pkg.md', 'priv.md', 'draft.md', 'hosts.md']) {
        expect(detail(result, link)).toBe('symbolic link not followed (followSymlinks is off)');
      }
      expect(reasons(result)).toMatchObject({
        node_modules: 'ignored',
        '.env': 'secret',
        'team/private.md': 'ignored',
        'drafts/d.md': 'ignored',
      });
      expect(result.skipped.filter((s) => s.path.startsWith('node_modules'))).toEqual([
        { source: 'r', path: 'node_modules', reason: 'ignored', detail: 'node_modules: never synced', size: null },
      ]);
    });

    it('followed, reach only files git tracks inside the root that are synced in their own right', async () => {
      const result = await syncGitSource(
        { name: 'r', url: linked(), ref: 'main', exclude: ['drafts/**'], followSymlinks: true },
        { stateDir: tempDir() },
      );

      expect(paths(result)).toEqual(['link.md', 'real.md']);
      expect(result.files.find((f) => f.path === 'link.md')?.absPath).toBe(join(result.checkoutDir, 'real.md'));
      expect(reasons(result)).toMatchObject({
        'leak.md': 'symlink',
        'env.md': 'secret',
        'pkg.md': 'ignored',
        'priv.md': 'ignored',
        'draft.md': 'ignored',
        'hosts.md': 'symlink',
      });
      expect(detail(result, 'leak.md')).toBe('symbolic link to .git/config: not a file git tracks in this source; not followed');
      expect(detail(result, 'env.md')).toBe('symbolic link to .env: named like .env; never read');
      expect(detail(result, 'pkg.md')).toBe(
        'symbolic link to node_modules/p/README.md: inside node_modules/ (node_modules: never synced); not followed',
      );
      expect(detail(result, 'priv.md')).toBe('symbolic link to team/private.md: matches team/.kbsyncignore: private.md; not followed');
      expect(detail(result, 'draft.md')).toBe('symbolic link to drafts/d.md: matches exclude: drafts/**; not followed');
      expect(detail(result, 'hosts.md')).toBe('symbolic link points outside the source root: not followed');
    });
  });

  it('refuses a subdir that is not a folder at the commit (a typo, or moved upstream) instead of reporting every file deleted', async () => {
    const origin = gitdir({ 'docs/a.md': '', 'notes.md': '' });
    const stateDir = tempDir();
    await syncGitSource({ name: 'r', url: origin, ref: 'main', subdir: 'docs' }, { stateDir });
    git(origin, ['mv', 'docs', 'guide']);
    commitAll(origin, {}, 'docs moved');

    for (const subdir of ['docs', 'doc', 'notes.md']) {
      await expect(syncGitSource({ name: 'r', url: origin, ref: 'main', subdir }, { stateDir })).rejects.toMatchObject({
        code: 'source_unavailable',
        message: expect.stringMatching(
          new RegExp(
            `subdir "${subdir.replace('.', '\\.')}" is not a folder at commit [0-9a-f]{12} \\(ref "main"\\); check sources\\[\\]\\.git\\.subdir$`,
          ),
        ),
      });
    }
    expect(paths(await syncGitSource({ name: 'r', url: origin, ref: 'main', subdir: 'guide' }, { stateDir }))).toEqual(['a.md']);
  });

  it('lists a submodule as skipped and never clones it', async () => {
    const sub = gitdir({ 'inner.md': 'inner' });
    const origin = gitdir({ 'a.md': '' });
    git(origin, ['submodule', 'add', '-q', sub, 'vendor/sub']);
    commitAll(origin, {}, 'add submodule');

    const result = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir: tempDir() });

    expect(paths(result)).toEqual(['a.md']);
    expect(result.skipped).toEqual(
      expect.arrayContaining([{ source: 'r', path: 'vendor/sub', reason: 'ignored', detail: 'git submodule: not synced', size: null }]),
    );
    expect(readdirSync(join(result.checkoutDir, 'vendor/sub'))).toEqual([]);
  });

  it('never runs hooks: not from the user config, not from the template, not from the checkout', async () => {
    const work = tempDir();
    const marker = join(work, 'hook-ran');
    const hook = `#!/bin/sh\necho "$0" >> ${marker}\n`;
    writeTree(work, { 'hooks/post-checkout': hook, 'template/hooks/post-checkout': hook });
    chmodSync(join(work, 'hooks/post-checkout'), 0o755);
    chmodSync(join(work, 'template/hooks/post-checkout'), 0o755);
    const userConfig = join(work, 'gitconfig');
    writeFileSync(userConfig, `[init]\n\ttemplateDir = ${join(work, 'template')}\n`);
    vi.stubEnv('GIT_CONFIG_GLOBAL', userConfig);
    const origin = gitdir({ 'a.md': '1' });
    const stateDir = tempDir();

    const first = await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });
    writeFileSync(userConfig, `[core]\n\thooksPath = ${join(work, 'hooks')}\n`);
    commitAll(origin, { 'a.md': '2' }, 'second');
    await syncGitSource({ name: 'r', url: origin, ref: 'main' }, { stateDir });

    expect(existsSync(join(first.checkoutDir, '.git/hooks/post-checkout'))).toBe(true); // the template was copied...
    expect(existsSync(marker)).toBe(false); // ...and yet no hook ran
    // The control: a plain git checkout in the same place, same config, does run the hook.
    execGit(first.checkoutDir, ['checkout', '-q', '--detach', 'HEAD~1'], userConfig);
    expect(existsSync(marker)).toBe(true);
  });
});

function execGit(cwd: string, args: string[], globalConfig: string): void {
  git(cwd, args, { GIT_CONFIG_GLOBAL: globalConfig });
}
