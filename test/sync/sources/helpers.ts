import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';

/** A file's content, or a symlink to create (target as given, relative or absolute). */
export type TreeEntry = string | Buffer | { symlink: string };

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp folder, removed after the test. */
export function tempDir(prefix = 'kbsync-src-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Writes `entries` (paths relative to `root`, "dir/" for an empty folder) under `root`. */
export function writeTree(root: string, entries: Record<string, TreeEntry>): void {
  for (const [path, entry] of Object.entries(entries)) {
    const abs = join(root, path);
    if (path.endsWith('/')) {
      mkdirSync(abs, { recursive: true });
      continue;
    }
    mkdirSync(dirname(abs), { recursive: true });
    if (typeof entry === 'object' && 'symlink' in entry) symlinkSync(entry.symlink, abs);
    else writeFileSync(abs, entry);
  }
}

/** A temp folder holding `entries`, removed after the test. */
export function testdir(entries: Record<string, TreeEntry>): string {
  const root = tempDir();
  writeTree(root, entries);
  return root;
}

/** Git isolated from this machine's config (as every git test here must be). */
export const GIT_ENV = {
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_SYSTEM: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

/** Runs git in `cwd` for a fixture (isolated config; local `file` clones allowed, for submodules). */
export function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync('git', ['-c', 'protocol.file.allow=always', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { ...process.env, ...GIT_ENV, ...env },
    encoding: 'utf8',
  });
}

/** A git repository (branch main) with one commit of `entries`. */
export function gitdir(entries: Record<string, TreeEntry>): string {
  const repo = tempDir('kbsync-repo-');
  git(repo, ['init', '-q']);
  commitAll(repo, entries, 'initial');
  return repo;
}

/** Writes `entries` into the repo and commits everything; returns the new commit id. */
export function commitAll(repo: string, entries: Record<string, TreeEntry>, message: string): string {
  writeTree(repo, entries);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '--allow-empty', '-m', message]);
  return git(repo, ['rev-parse', 'HEAD']).trim();
}
