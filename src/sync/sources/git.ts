import type { ConvertType } from '../../shared/file-types.js';
import { existsSync, lstatSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { KbsyncError } from '../../shared/errors.js';
import { parseNameStatus, type GitChanges } from './git-diff.js';
import { createGitRunner, redactCredentials, type GitRun } from './git-runner.js';
import { listGitTree, type GitTreeSpec } from './git-tree.js';
import type { ScanResult } from './folder.js';

export type { GitChanges } from './git-diff.js';

/** A git source: where it comes from, and which of its files are wanted. */
export type GitSourceSpec = {
  name: string;
  url: string;
  /** Branch, tag or commit; "HEAD" is the remote's default branch. */
  ref: string;
  subdir?: string | undefined;
  include?: readonly string[];
  exclude?: readonly string[];
  followSymlinks?: boolean;
  convert?: readonly ConvertType[];
};

/** A git source synced to a pinned commit: the checkout, its files and what was left out. */
export type GitScanResult = ScanResult & {
  /** Top of the checkout (`stateDir/git/<name>`). */
  checkoutDir: string;
  /** The source root: the checkout, or its subdir. File paths are relative to it. */
  root: string;
  /** Normalised subdir ("" for the whole repository). */
  subdir: string;
  commit: string;
};

/**
 * Clones the source into `stateDir/git/<name>` (or reuses the checkout there), fetches, pins `ref`
 * to a commit and checks it out detached and clean, then lists its files from git (`ls-files`)
 * and stats them in the checkout. Hooks never run; submodules are listed as skipped, never cloned.
 * Throws `git_failed` (git's stderr, credentials redacted) or `source_unavailable`.
 */
export async function syncGitSource(spec: GitSourceSpec, options: { stateDir: string }): Promise<GitScanResult> {
  checkArgument(spec.name, 'url', spec.url);
  checkArgument(spec.name, 'ref', spec.ref);
  const subdir = normaliseSubdir(spec.name, spec.subdir);
  const parent = join(options.stateDir, 'git');
  const checkoutDir = join(parent, spec.name);
  // The checkout is removed and replaced below: it must be a folder of its own under stateDir/git
  // (the config refuses such names; this holds whoever calls).
  if (dirname(checkoutDir) !== parent || basename(checkoutDir) !== spec.name) {
    throw new KbsyncError(
      'source_unavailable',
      `source "${spec.name}": a git source's name must name one folder under ${parent}; rename the source`,
    );
  }
  mkdirSync(parent, { recursive: true, mode: 0o700 });

  const fresh = !existsSync(join(checkoutDir, '.git'));
  if (fresh) {
    // Cloned beside the checkout and renamed when complete: a clone a crash cut short is only ever a
    // `.partial` folder, removed here, never a checkout missing objects that the next pass would trust.
    const partial = `${checkoutDir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    await createGitRunner(parent, spec.name)(['clone', '--no-checkout', '--no-recurse-submodules', '--', spec.url, partial]);
    rmSync(checkoutDir, { recursive: true, force: true }); // not a checkout (no .git): kbsync's own folder
    renameSync(partial, checkoutDir);
  }
  const git = createGitRunner(checkoutDir, spec.name);
  if (!fresh) {
    // The checkout is kbsync's own, and this process holds the state's writer lock: a git lock file in
    // it was left by a kbsync killed mid-command, and would fail every sync from now on.
    for (const lock of STALE_GIT_LOCKS) rmSync(join(checkoutDir, '.git', lock), { force: true });
    const origin = (await git(['remote', 'get-url', 'origin'])).trim();
    if (origin !== spec.url) await git(['remote', 'set-url', 'origin', '--', spec.url]);
    await git(['fetch', '--prune', '--force', '--tags', '--no-recurse-submodules', 'origin']);
  }
  const commit = await resolveRef(git, spec);
  await git(['checkout', '--force', '--detach', '--no-recurse-submodules', commit, '--']);
  await git(['clean', '-ffdxq']);

  const root = subdir === '' ? checkoutDir : join(checkoutDir, subdir);
  // As a folder source whose path is missing: a subdir that is not there (a typo, or moved upstream)
  // must not read as "every file deleted".
  if (subdir !== '' && lstatSync(root, { throwIfNoEntry: false })?.isDirectory() !== true) {
    throw new KbsyncError(
      'source_unavailable',
      `source "${spec.name}": subdir "${subdir}" is not a folder at commit ${commit.slice(0, 12)} (ref "${spec.ref}"); check sources[].git.subdir`,
    );
  }
  const tree: GitTreeSpec = {
    name: spec.name,
    checkoutDir,
    root,
    subdir,
    include: spec.include ?? ['**/*'],
    exclude: spec.exclude ?? [],
    followSymlinks: spec.followSymlinks ?? false,
    convert: spec.convert ?? [],
  };
  const listing = await git(['--literal-pathspecs', 'ls-files', '--stage', '-z', '--', subdir === '' ? '.' : subdir]);
  return { ...listGitTree(tree, listing), checkoutDir, root, subdir, commit };
}

/** Lock files git leaves behind when killed in the middle of a fetch or a checkout. */
const STALE_GIT_LOCKS = ['index.lock', 'HEAD.lock', 'config.lock', 'shallow.lock', 'packed-refs.lock'];

/** A full or abbreviated commit id. */
const COMMIT_ID = /^[0-9a-f]{7,64}$/i;

/** The commit `ref` names on the remote: a branch, a tag, a full commit id, or the default branch for HEAD. */
async function resolveRef(git: GitRun, spec: GitSourceSpec): Promise<string> {
  let candidates: string[];
  if (spec.ref === 'HEAD') {
    await git(['remote', 'set-head', 'origin', '--auto']);
    candidates = ['refs/remotes/origin/HEAD'];
  } else {
    // The bare ref only as a commit id: as a name it would also find the clone's own branches, which
    // outlive a branch deleted on the remote (a sync would quietly stay on its last commit).
    candidates = [`refs/remotes/origin/${spec.ref}`, `refs/tags/${spec.ref}`, ...(COMMIT_ID.test(spec.ref) ? [spec.ref] : [])];
  }
  for (const candidate of candidates) {
    const commit = await tryRevParse(git, candidate);
    if (commit !== null) return commit;
  }
  if (COMMIT_ID.test(spec.ref)) {
    await git(['fetch', '--no-recurse-submodules', 'origin', spec.ref]);
    const commit = await tryRevParse(git, spec.ref);
    if (commit !== null) return commit;
  }
  throw new KbsyncError(
    'git_failed',
    `source "${spec.name}": ref "${spec.ref}" is not a branch, tag or commit of ${redactCredentials(spec.url)}`,
  );
}

async function tryRevParse(git: GitRun, rev: string): Promise<string | null> {
  try {
    const out = (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`])).trim();
    return out === '' ? null : out;
  } catch {
    return null;
  }
}

/**
 * What changed in the source (paths relative to its subdir) between two commits of the checkout,
 * from `git diff --name-status -M100%` (a rename is identical content moved). Null when `fromCommit` is unknown here (a shallow clone, or
 * history rewritten by a force-push): the caller then compares full file lists instead.
 */
export async function changedSince(checkoutDir: string, fromCommit: string, toCommit: string, subdir = ''): Promise<GitChanges | null> {
  const git = createGitRunner(checkoutDir, checkoutDir);
  const sub = normaliseSubdir(checkoutDir, subdir);
  const from = await tryRevParse(git, fromCommit);
  const to = await tryRevParse(git, toCommit);
  if (from === null || to === null) return null;
  // Not an ancestor (history rewritten), or no common history known here (shallow): compare in full.
  // (Read from output: simple-git resolves a command that fails without writing to stderr.)
  const base = await git(['merge-base', from, to]).catch(() => '');
  if (base.trim() !== from) return null;
  // -M100%: only identical content counts as a rename; an edited move is a deletion and an addition.
  const args = ['--literal-pathspecs', 'diff', '--name-status', '-M100%', '-z', '--no-ext-diff', '--no-textconv', from, to, '--'];
  const output = await git(sub === '' ? args : [...args, sub]);
  return parseNameStatus(output, sub);
}

/** "docs/" → "docs"; refuses absolute paths and "..", which would leave the repository. */
function normaliseSubdir(name: string, subdir: string | undefined): string {
  const parts = (subdir ?? '').split('/').filter((p) => p !== '' && p !== '.');
  if ((subdir ?? '').startsWith('/') || parts.includes('..')) {
    throw new KbsyncError('source_unavailable', `source "${name}": subdir must be a folder inside the repository`);
  }
  return parts.join('/');
}

/** A url or ref starting with "-" would be read by git as an option. */
function checkArgument(name: string, what: string, value: string): void {
  if (value.startsWith('-') || /[\0\n\r]/.test(value)) {
    throw new KbsyncError('source_unavailable', `source "${name}": invalid git ${what}`);
  }
}
