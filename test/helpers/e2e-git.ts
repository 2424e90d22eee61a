import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { git } from './git.js';

export { GIT_ENV } from './git.js';

/** A bare "origin" repository and a working clone of it, under `root`. */
export type GitOrigin = {
  bare: string;
  work: string;
  /** Writes files (null deletes one) in the clone, commits everything and pushes; returns the commit id. */
  commit(files: Record<string, string | null>, message: string): string;
  /** `git mv` in the clone, committed and pushed. */
  move(from: string, to: string, message: string): string;
  /** Amends the last commit with `files` and force-pushes: the old tip leaves the history. */
  amendAndForcePush(files: Record<string, string | null>): string;
};

/** Creates `root/origin.git` (bare, branch main) and `root/work`, with a first commit of `files` pushed. */
export function createGitOrigin(root: string, files: Record<string, string>): GitOrigin {
  const bare = join(root, 'origin.git');
  const work = join(root, 'work');
  git(root, ['init', '-q', '--bare', bare]);
  git(root, ['clone', '-q', bare, work]);
  const write = (entries: Record<string, string | null>): void => {
    for (const [path, content] of Object.entries(entries)) {
      const abs = join(work, path);
      if (content === null) rmSync(abs);
      else {
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, content);
      }
    }
    git(work, ['add', '-A']);
  };
  const head = (): string => git(work, ['rev-parse', 'HEAD']).trim();
  const origin: GitOrigin = {
    bare,
    work,
    commit(entries, message) {
      write(entries);
      git(work, ['commit', '-q', '-m', message]);
      git(work, ['push', '-q', 'origin', 'HEAD:main']);
      return head();
    },
    move(from, to, message) {
      mkdirSync(dirname(join(work, to)), { recursive: true });
      git(work, ['mv', from, to]);
      git(work, ['commit', '-q', '-m', message]);
      git(work, ['push', '-q', 'origin', 'HEAD:main']);
      return head();
    },
    amendAndForcePush(entries) {
      write(entries);
      git(work, ['commit', '-q', '--amend', '-m', 'rewritten']);
      git(work, ['push', '-q', '-f', 'origin', 'HEAD:main']);
      return head();
    },
  };
  origin.commit(files, 'initial');
  return origin;
}
