import type { Source } from '../../config/schema.js';
import { KbsyncError } from '../../shared/errors.js';
import { sameFingerprint, type Fingerprint } from '../tracked/columns.js';
import type { Observation, ObservedFile, SkippedPath } from '../types.js';
import { scanFolder, type ScanResult, type ScannedFile, type ScopeDir } from './folder.js';
import { hashFiles, startHashing, type HashOptions, type HashOutcome } from './hash.js';
import type { WalkAhead } from './walk-ahead.js';
import type { StatPoolOptions } from './stat-pool.js';
import type { UnchangedRows } from '../tracked/unchanged-rows.js';
import { convertHashed, type ConvertStage } from './converted.js';
import { convertTypeOf } from '../../shared/file-types.js';

export { scanFolder, type ScopeDir } from './folder.js';
// git.ts (and simple-git, slow to load) is imported only when a git source is observed: call
// syncGitSource / changedSince from './git.js' directly.
export { hashFiles, type HashOptions } from './hash.js';
export { WalkAhead } from './walk-ahead.js';

/** What the state knows of a file: the fingerprint it last saw and the content hash it had then. */
export type KnownFile = Fingerprint & { sha256: string };

/** What the state knows of the files (a TrackedIndex is one; knownFiles() makes one from a lookup). */
export type KnownFiles = {
  /**
   * The sha256 recorded for this source and path if the file still has the fingerprint it had then
   * (any fingerprint when `stat` is null: its content is known not to have changed); else null.
   */
  knownSha256(source: string, path: string, stat: Fingerprint | null): string | null;
  /**
   * knownSha256 for an observed file, which may replace its path and mtime strings with equal ones
   * it holds (TrackedIndex does: see knownSha256Of there). `anyStat`: any fingerprint will do.
   */
  knownSha256Of?(file: ObservedFile, anyStat: boolean): string | null;
};

/** KnownFiles over a lookup of each file's record (tests, small callers). */
export function knownFiles(lookup: (source: string, path: string) => KnownFile | undefined): KnownFiles {
  return {
    knownSha256(source, path, stat) {
      const seen = lookup(source, path);
      return seen !== undefined && (stat === null || sameFingerprint(seen, stat)) ? seen.sha256 : null;
    },
  };
}

export type ObserveOptions = {
  /** kbsync's state folder: git sources are checked out under `stateDir/git/<name>`. */
  stateDir: string;
  /**
   * What the state knows of the files; asked once per file found, in (source, path) order. May
   * come as a promise (the state still loading in a worker): it is awaited once the sources are walked.
   */
  known: KnownFiles | Promise<KnownFiles>;
  hash?: HashOptions;
  /**
   * For git sources: the commit last synced in full. Files that `git diff` says did not change since
   * then keep their known hash even when their stat moved (a fresh clone on a CI runner rewrites every
   * mtime and inode), so only what git reports as changed is hashed.
   */
  lastSyncedCommit?: (source: string, scope: string) => string | null;
  /**
   * Hash folder files as the walk finds them (in worker threads, while it goes on), for a pass that
   * expects to hash most files: a first scan, or a state rebuilt from the remote listing. `known` is
   * then awaited before walking.
   */
  hashWhileWalking?: boolean;
  /**
   * A helper already walking the folder sources' roots (see WalkAhead; started early, so that it
   * gets ahead while the state is read): their walks take listings and lstats from it.
   */
  walkAhead?: WalkAhead | null;
  /** Called as files are hashed: how many so far, of how many found to hash so far (a first scan finds more as it walks). */
  onHashProgress?: (done: number, total: number) => void;
  /**
   * Observe only these folder sources, each only in these folders (see ScopeDir): a `kbsync watch`
   * cycle after a burst of events. Sources not named are not observed at all.
   */
  scope?: ReadonlyMap<string, readonly ScopeDir[]> | null;
  /** How a folder walk shares its lstats with a helper thread (scanFolder's statPool). */
  statPool?: StatPoolOptions;
  /**
   * Full folder walks (no scope, not hashing while walking) drop the files found unchanged, marking
   * their rows here (scanFolder's `unchanged`): `kbsync watch`, whose delta plan only counts them.
   */
  unchanged?: UnchangedRows | null;
  /**
   * Where documents of a source's `convert` types are converted (each hashed file of such a type gets
   * its Markdown's hash; one that cannot be converted moves to `skipped`). Unset: none is converted.
   */
  convert?: ConvertStage;
};

/**
 * One pass over every source (paths in `sources` already absolute): walk or git-sync each, then
 * hash only the files whose (size, mtimeNs, inode) differ from `known`; unchanged files keep their
 * known sha256. A file that changed while hashed gets `sha256: null` (deferred); one that cannot be
 * read moves to `skipped` as unreadable. Files come in (source, path) order.
 */
export async function observeSources(sources: readonly Source[], options: ObserveOptions): Promise<Observation> {
  const observation: Observation = { files: [], skipped: [], sources: [], inPathOrder: false };
  const results: ScanResult[] = [];
  /** Per git source with a usable diff: the paths git reports as added, modified or renamed since the last synced commit. */
  const changedByGit = new Map<string, ReadonlySet<string>>();
  // Progress: files hashed, of those handed to the hashers (streamed while walking, then the rest at once).
  let hashed = 0;
  let toHashCount = 0;
  const report = options.onHashProgress;
  const hashOptions: HashOptions | undefined =
    report === undefined
      ? options.hash
      : {
          ...options.hash,
          onHashed: (n) => {
            hashed += n;
            report(hashed, toHashCount);
          },
        };
  // Hashing while walking: each folder file is compared as found, and sent to the hashers if it moved.
  const stream =
    options.hashWhileWalking === true
      ? { known: await options.known, hashing: startHashing(hashOptions), files: [] as ObservedFile[] }
      : null;
  const onFile =
    stream === null
      ? null
      : (scanned: ScannedFile): void => {
          const file = scanned as ObservedFile;
          if (!takeKnown(file, stream.known, false)) return;
          toHashCount += 1;
          stream.hashing.add(file);
          stream.files.push(file);
        };
  try {
    for (const source of sources) {
      if (options.scope != null && !options.scope.has(source.name)) continue;
      const { kind, root, commit, scope, result, changed } = await observeOne(source, options, onFile);
      observation.sources.push({ name: source.name, kind, root, commit, scope });
      results.push(result);
      if (changed !== null) changedByGit.set(source.name, changed);
    }
  } catch (err) {
    await stream?.hashing.cancel();
    throw err;
  } finally {
    // Every walk is done: a helper still walking (an ignored folder the walks never entered) has nothing left to give.
    options.walkAhead?.stop();
  }
  // Files in (source, path) order, as the planner prefers them: each source's walk is path-ordered.
  const observed = options.scope == null ? sources : sources.filter((s) => (options.scope as ReadonlyMap<string, unknown>).has(s.name));
  const order = observed.map((s, i) => ({ name: s.name, i, streamed: stream !== null && s.git === undefined }));
  order.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files: ObservedFile[] = [];
  const toHash: ObservedFile[] = [];
  const known = withStaleConversions(stream?.known ?? (await options.known), options.convert?.stale);
  for (const { i, streamed } of order) {
    const result = results[i] as ScanResult;
    const rootPrefix = `${(observation.sources[i] as Observation['sources'][number]).root}/`;
    // Indexed loops: a spread or a for-of over 100k entries allocates per entry in code run once
    // (and a spread of a few hundred thousand arguments overflows the stack).
    for (let k = 0; k < result.skipped.length; k++) observation.skipped.push(result.skipped[k] as SkippedPath);
    for (let k = 0; k < result.files.length; k++) {
      const file = result.files[k] as ObservedFile;
      if (!streamed) {
        const gitChanged = changedByGit.get(file.source);
        // Git's word covers the paths it tracks as files; a followed link's content is its target's,
        // which git reports under the target's path: a link is compared by its stat like a folder file.
        const unchangedByGit =
          gitChanged !== undefined &&
          !gitChanged.has(file.path) &&
          file.absPath.length === rootPrefix.length + file.path.length &&
          file.absPath.endsWith(file.path) &&
          file.absPath.startsWith(rootPrefix);
        if (takeKnown(file, known, unchangedByGit)) toHash.push(file);
      }
      files.push(file);
    }
  }

  toHashCount += toHash.length;
  const hashes = await hashFiles(toHash, hashOptions);
  const streamedHashes = stream === null ? null : await stream.hashing.done();
  const unreadable = new Set<ObservedFile>();
  const apply = (list: readonly ObservedFile[], outcomes: ReadonlyMap<string, HashOutcome>): void => {
    for (let k = 0; k < list.length; k++) {
      const file = list[k] as ObservedFile;
      const outcome = outcomes.get(file.absPath);
      if (outcome !== undefined && 'sha256' in outcome) file.sha256 = outcome.sha256;
      else if (outcome !== undefined && 'unreadable' in outcome) {
        unreadable.add(file);
        observation.skipped.push({
          source: file.source,
          path: file.path,
          reason: 'unreadable',
          detail: outcome.unreadable,
          size: file.size,
        });
      }
    }
  };
  apply(toHash, hashes);
  if (stream !== null && streamedHashes !== null) apply(stream.files, streamedHashes);
  // Documents hashed by their own bytes are converted now; one whose hash was known holds its Markdown's.
  if (options.convert !== undefined) {
    const documents = [...toHash, ...(stream?.files ?? [])].filter((f) => f.sha256 !== null && convertTypeOf(f.path) !== null);
    if (documents.length > 0) {
      const notConverted = await convertHashed(documents, options.convert);
      for (const [file, skip] of notConverted) {
        unreadable.add(file);
        observation.skipped.push(skip);
      }
    }
  }
  observation.files = unreadable.size === 0 ? files : files.filter((f) => !unreadable.has(f));
  // Each source's files in path order, the sources in name order: all of them in (source, path) order.
  observation.inPathOrder = results.every((r) => r.inPathOrder === true);
  return observation;
}

/** KnownFiles that know no hash of a document whose converter changed: it is hashed, and converted again. */
function withStaleConversions(known: KnownFiles, stale: ReadonlySet<string> | undefined): KnownFiles {
  if (stale === undefined || stale.size === 0) return known;
  const isStale = (path: string): boolean => stale.has(convertTypeOf(path) ?? '');
  return {
    knownSha256: (source, path, stat) => (isStale(path) ? null : known.knownSha256(source, path, stat)),
    knownSha256Of: (file, anyStat) =>
      isStale(file.path)
        ? null
        : known.knownSha256Of !== undefined
          ? known.knownSha256Of(file, anyStat)
          : known.knownSha256(file.source, file.path, anyStat ? null : file),
  };
}

/**
 * Gives `file` the known hash when the state's record still fits it (same size, mtime and inode,
 * or git says it did not change); else marks it for hashing (sha256 null) and returns true.
 */
function takeKnown(file: ObservedFile, known: KnownFiles, unchangedByGit: boolean): boolean {
  file.sha256 =
    known.knownSha256Of !== undefined
      ? known.knownSha256Of(file, unchangedByGit)
      : known.knownSha256(file.source, file.path, unchangedByGit ? null : file);
  return file.sha256 === null;
}

/**
 * What a git source's synced commit holds for: its repository and subdir (normalised). The url goes
 * in with its credentials redacted: a token is never written to the state, and rotating it keeps the scope.
 */
export function gitScope(url: string, subdir: string): string {
  return `${url}\n${subdir}`;
}

type ObservedSource = {
  kind: 'folder' | 'git';
  root: string;
  commit: string | null;
  scope: string | null;
  result: ScanResult;
  changed: ReadonlySet<string> | null;
};

async function observeOne(source: Source, options: ObserveOptions, onFile: ((file: ScannedFile) => void) | null): Promise<ObservedSource> {
  const rules = { include: source.include, exclude: source.exclude, followSymlinks: source.followSymlinks, convert: source.convert ?? [] };
  if (source.git !== undefined) {
    const { syncGitSource, changedSince } = await import('./git.js');
    const { redactCredentials } = await import('./git-runner.js');
    const git = await syncGitSource({ name: source.name, ...source.git, ...rules }, { stateDir: options.stateDir });
    const scope = gitScope(redactCredentials(source.git.url), git.subdir);
    const last = options.lastSyncedCommit?.(source.name, scope) ?? null;
    // null (no synced commit yet, a shallow clone, rewritten history): fall back to comparing every file.
    const diff =
      last === null
        ? null
        : last === git.commit
          ? { added: [], modified: [], deleted: [], renamed: [] }
          : await changedSince(git.checkoutDir, last, git.commit, source.git.subdir);
    const changed = diff === null ? null : new Set([...diff.added, ...diff.modified, ...diff.renamed.map((r) => r.to)]);
    return { kind: 'git', root: git.root, commit: git.commit, scope, result: git, changed };
  }
  if (source.path === undefined) throw new KbsyncError('config_invalid', `source "${source.name}": give exactly one of "path" or "git"`);
  const scope = options.scope?.get(source.name) ?? null;
  const result = scanFolder(
    { name: source.name, root: source.path, ...rules },
    {
      onFile,
      ahead: scope === null ? (options.walkAhead ?? null) : null,
      scope,
      unchanged: onFile === null ? (options.unchanged ?? null) : null,
      ...(options.statPool !== undefined ? { statPool: options.statPool } : {}),
    },
  );
  return { kind: 'folder', root: source.path, commit: null, scope: null, result, changed: null };
}
