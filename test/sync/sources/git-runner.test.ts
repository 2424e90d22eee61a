import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGitRunner, redactCredentials } from '../../../src/sync/sources/git-runner.js';

describe('redactCredentials', () => {
  it.each([
    ["fatal: unable to access 'https://bob:ghp_abc123@github.com/o/r.git/'", "fatal: unable to access 'https://***@github.com/o/r.git/'"],
    ['https://x-access-token:tok@host/r and ssh://git:pw@host:22/r', 'https://***@host/r and ssh://***@host:22/r'],
    ['https://github.com/o/r.git', 'https://github.com/o/r.git'],
    ['git@github.com:o/r.git', 'git@github.com:o/r.git'],
  ])('%s', (input, expected) => {
    expect(redactCredentials(input)).toBe(expected);
  });
});

describe('createGitRunner', () => {
  it('without git on PATH, the error says git is missing, not that the URL, ref or credentials are wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-nogit-'));
    const path = process.env.PATH;
    process.env.PATH = dir;
    try {
      const git = createGitRunner(dir, 'guide');
      await expect(git(['status'])).rejects.toMatchObject({
        code: 'git_failed',
        message: expect.stringMatching(
          /^source "guide": git status failed: git is not installed or not on PATH \(.*ENOENT.*\): install git$/,
        ),
      });
    } finally {
      process.env.PATH = path;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
