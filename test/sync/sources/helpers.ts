import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, expect, vi } from 'vitest';
import { git } from '../../helpers/git.js';

/** A file's content, or a symlink to create (target as given, relative or absolute). */
export type TreeEntry = string | Buffer | { symlink: string };

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** This process's OS threads: each live worker thread is one. */
export const threadCount = (): number => readdirSync('/proc/self/task').length;

/**
 * Waits until no more threads run than `before`: a worker's OS thread outlives terminate() for a
 * moment, and one left by an earlier test file in this process may end meanwhile (so not "equal").
 */
export async function noThreadLeft(before: number): Promise<void> {
  await vi.waitFor(() => expect(threadCount()).toBeLessThanOrEqual(before), { timeout: 5000 });
}

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

export { GIT_ENV, git } from '../../helpers/git.js';

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
