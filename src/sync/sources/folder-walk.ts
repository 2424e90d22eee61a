import type { ConvertType } from '../../shared/file-types.js';
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { errorText } from '../../shared/errors.js';
import { badNameDetail, badNamePath, badNamesIn, type BadNames } from './bad-names.js';
import type { ObservedFile, SkippedPath, SkipReason } from '../types.js';
import { IGNORE_FILE_NAMES, matchIgnoreRules, readIgnoreLevels, type IgnoreLevel } from './ignore-rules.js';
import { mtimeNsOf } from './fingerprint.js';
import type { Refusal, TargetRules } from './link-targets.js';
import { hasControlCharacter, NEVER_DESCEND, type PathFilter } from './path-filter.js';
import type { StatPool, StatSink } from './stat-pool.js';
import type { UnchangedRows } from '../tracked/unchanged-rows.js';
import { ENTRY_DIR, ENTRY_FILE, ENTRY_LINK, listingOf, type Listing, type WalkAhead } from './walk-ahead.js';

/**
 * The walk of one folder source (scanFolder's, in folder.ts): folders listed with their file types,
 * candidate files lstat'ed (on this thread, through the stat pool, or from the helper walking ahead),
 * links followed under the rules of their targets' real paths, every path left out recorded with why.
 */

/** A folder source, its root already absolute. */
export type FolderSourceSpec = {
  name: string;
  root: string;
  include: readonly string[];
  exclude: readonly string[];
  followSymlinks: boolean;
  /** Document types converted to Markdown before upload (candidates, not unsupported). @default [] */
  convert?: readonly ConvertType[];
};

/**
 * A file a source found, before hashing. A folder walk makes each one an ObservedFile with sha256
 * null already: observing then fills the field in rather than adding it (one object shape, no
 * property storage grown for 100k files).
 */
export type ScannedFile = Omit<ObservedFile, 'sha256'>;

/**
 * What one walk of a source saw: candidate files and every path it left out, with why.
 * `inPathOrder`: the files are strictly in path order (plain string order), as a folder walk
 * delivers them unless it followed a link to a folder (listed under the link's name, it sorts as
 * a file would); absent when not known.
 */
export type ScanResult = { files: ScannedFile[]; skipped: SkippedPath[]; inPathOrder?: boolean };

/**
 * The ignore-file rules in force in one folder (made once per folder, not per file), and whether
 * its path is free of control characters (then only each file's name is tested for one).
 */
export type DirRules = { levels: readonly IgnoreLevel[]; ignoredBy: (path: string, baseName: string) => string | null; clean: boolean };

export type Walk = {
  spec: FolderSourceSpec;
  /** Called with each candidate file as soon as it is found (a hasher can start on it meanwhile). */
  onFile: ((file: ScannedFile) => void) | null;
  filter: PathFilter;
  /** Where candidate files are lstat'ed, when the walk shares that with a helper thread (no onFile); by their index in result.files. */
  pool: StatPool<number> | null;
  /** The helper walking ahead, when one was started for this walk (see WalkAhead); the pool is then null. */
  ahead: WalkAhead | null;
  /** Listed files (their index in result.files) whose lstats the helper had in hand when the walk got there: taken at the end. */
  deferred: { listing: Listing; files: number[]; entries: number[] }[];
  /** Each file's lstat, by the file's index in result.files. */
  sink: StatSink<number>;
  /** Files found unchanged are counted there and dropped (ScanOptions.unchanged). */
  unchanged: UnchangedRows | null;
  realRoot: string;
  /** Real paths of the folders being walked right now, root first (cycle guard for followed links). */
  realStack: string[];
  /** How many followed folder links the walk is inside: there, each entry is held to its real path's rules too. */
  followDepth: number;
  /** The rules a followed link's target is held to, by its real path. */
  targets: TargetRules;
  result: ScanResult;
  /** True while a scoped walk lists one folder's own entries: its sub-folders are not entered. */
  direct: boolean;
};

/** A candidate's size while its lstat is pending, and after, if it was gone or unreadable. */
export const NO_SIZE = -1;

export function walkDir(
  walk: Walk,
  absDir: string,
  realDir: string,
  dir: string,
  parentLevels: readonly IgnoreLevel[],
  listedAhead: boolean,
): void {
  const listing = listedAhead && walk.ahead !== null ? walk.ahead.listing(absDir) : null;
  let names: readonly string[];
  let kinds: ArrayLike<number>;
  let levels = parentLevels;
  try {
    if (listing !== null) ({ names, kinds } = listing);
    else ({ names, kinds } = listingOf(readdirSync(absDir, { withFileTypes: true })));
    let present: Set<string> | null = null;
    // Only regular files: a symlinked .gitignore could point outside the root, which is never read.
    for (let i = 0; i < names.length; i++)
      if (kinds[i] === ENTRY_FILE && IGNORE_FILE_NAMES.includes(names[i] as string)) (present ??= new Set()).add(names[i] as string);
    if (present !== null) levels = [...parentLevels, ...readIgnoreLevels(absDir, dir, present)];
  } catch (err) {
    skip(walk, dir === '' ? '.' : dir, 'unreadable', errorText(err), null);
    return;
  }
  // The helper's lstats of this folder's files: here already, done here (claimed), or taken at the end.
  const claim = listing === null || walk.ahead === null ? null : walk.ahead.claimStats(listing);
  const stats = claim instanceof Float64Array ? claim : null;
  const deferred = claim === 'helper' && listing !== null ? { listing, files: [] as number[], entries: [] as number[] } : null;
  if (deferred !== null) walk.deferred.push(deferred);
  // The folder's prefixes, made once: each path is then one concatenation (a 32-byte cons) per file, not two.
  const pathPrefix = dir === '' ? '' : `${dir}/`;
  const absPrefix = `${absDir}/`;
  const rules: DirRules = {
    levels,
    ignoredBy: (path, baseName) => matchIgnoreRules(levels, path, false, baseName),
    clean: !hasControlCharacter(dir),
  };
  walk.realStack.push(realDir);
  // Names readdir could not read as UTF-8 (a U+FFFD for each bad byte), listed again as bytes once.
  let bad: BadNames | undefined;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const kind = kinds[i];
    if (name.includes('\uFFFD') && takeBadName(walk, (bad ??= badNamesIn(absDir)), pathPrefix, name, kind, rules)) continue;
    const path = pathPrefix + name;
    const abs = absPrefix + name;
    if (kind === ENTRY_FILE) {
      if (stats === null && deferred === null) visitFile(walk, abs, path, name, rules, null);
      else visitListedFile(walk, abs, path, name, rules, stats, i, deferred);
    } else if (kind === ENTRY_DIR) visitDir(walk, abs, `${realDir}/${name}`, path, name, rules, listing !== null);
    else if (kind === ENTRY_LINK) visitLink(walk, abs, path, name, rules);
    else visitOther(walk, abs, realDir, path, name, rules);
  }
  walk.realStack.pop();
}

/**
 * Takes an entry whose name holds U+FFFD: true when it stands for names that are not UTF-8 (each then
 * gets its skip entry, once however many entries read as this name: the folder's or the file's own
 * rules first, a `bad-name` entry where it would be walked or be a candidate), false for a valid name
 * that holds the character itself (walked as any other).
 */
function takeBadName(walk: Walk, bad: BadNames, pathPrefix: string, name: string, kind: number | undefined, rules: DirRules): boolean {
  const raws = bad?.get(name);
  if (raws === undefined) return false;
  bad?.set(name, []);
  const lossyPath = pathPrefix + name;
  for (const raw of raws) {
    const path = badNamePath(pathPrefix, raw);
    if (kind === ENTRY_DIR) {
      const left = leftOut(walk, lossyPath, name, rules);
      if (left !== null) skip(walk, path, left === undefined ? 'bad-name' : 'ignored', left ?? badNameDetail(raw, true), null);
      continue;
    }
    const verdict = walk.filter.classifyFile(lossyPath, name, rules.ignoredBy, rules.clean);
    if (verdict === 'outside') continue;
    if (verdict === 'candidate') skip(walk, path, 'bad-name', badNameDetail(raw, false), null);
    else skip(walk, path, verdict.reason, verdict.detail, null);
  }
  return true;
}

/** `listedAhead`: the folder is one the helper walking ahead lists (found in one of its listings). */
function visitDir(walk: Walk, abs: string, real: string, path: string, name: string, rules: DirRules, listedAhead = false): void {
  if (walk.followDepth > 0) {
    const refused = walk.targets.refused(walk.targets.relative(real), true);
    if (refused !== null) return skip(walk, path, refused.reason, throughLink(walk, real, refused), null);
  }
  const left = leftOut(walk, path, name, rules);
  if (left === undefined && walk.direct) return;
  if (left === undefined) return walkDir(walk, abs, real, path, rules.levels, listedAhead);
  // The helper walking ahead lists every folder but .git and node_modules: it need not read this one.
  if (listedAhead && !NEVER_DESCEND.has(name)) walk.ahead?.skipped(walk.spec.root, abs);
  if (left !== null) skip(walk, path, 'ignored', left, null);
}

/**
 * Why a folder is not walked, as its skip entry's detail; null when it is outside the include
 * globs (not listed at all); undefined when it is walked.
 */
export function leftOut(walk: Walk, path: string, name: string, rules: DirRules): string | null | undefined {
  if (!walk.filter.mayIncludeUnder(path)) return null;
  const never = NEVER_DESCEND.get(name);
  if (never !== undefined) return never;
  const ignored = matchIgnoreRules(rules.levels, path, true);
  if (ignored !== null) return ignored;
  const excluded = walk.filter.folderExcludedBy(path);
  return excluded === null ? undefined : `matches exclude: ${excluded}`;
}

/**
 * `stats` is given when the file was already stat'ed (reached through a followed file link, abs is
 * then its real path and `linkChecked` true; or of a type readdir did not give).
 */
function visitFile(walk: Walk, abs: string, path: string, name: string, rules: DirRules, stats: Stats | null, linkChecked = false): void {
  const verdict = walk.filter.classifyFile(path, name, rules.ignoredBy, rules.clean);
  if (verdict === 'outside') return;
  // Not even an unsupported file is stat'ed: its size is not worth a syscall (a docs tree is often a
  // fifth images), and the walk's lstats are most of an unchanged plan's time.
  if (verdict !== 'candidate') return skip(walk, path, verdict.reason, verdict.detail, stats === null ? null : stats.size);
  if (walk.followDepth > 0 && !linkChecked && refusedThroughLink(walk, abs, path)) return;
  if (stats === null && walk.pool !== null) {
    const file: ObservedFile = { source: walk.spec.name, path, absPath: abs, size: NO_SIZE, mtimeNs: '', inode: 0, sha256: null };
    return walk.pool.lstat(abs, walk.result.files.push(file) - 1);
  }
  let st: Stats | undefined;
  try {
    st = stats ?? lstatSync(abs, { throwIfNoEntry: false });
  } catch (err) {
    return skip(walk, path, 'unreadable', errorText(err), null);
  }
  if (st === undefined || !st.isFile()) return; // gone (or replaced) since readdir: the next pass sees it
  const file: ObservedFile = {
    source: walk.spec.name,
    path,
    absPath: abs,
    size: st.size,
    mtimeNs: mtimeNsOf(st),
    inode: st.ino,
    sha256: null,
  };
  if (walk.unchanged?.take(file.source, path, file) === true) return;
  walk.result.files.push(file);
  walk.onFile?.(file);
}

/**
 * A file of a folder the helper listed: its lstat is in `stats` (NaN: none, lstat'ed here), or on
 * its way (`deferred`: the file is listed now and gets its stat at the end, see takeDeferred).
 */
function visitListedFile(
  walk: Walk,
  abs: string,
  path: string,
  name: string,
  rules: DirRules,
  stats: Float64Array | null,
  i: number,
  deferred: Walk['deferred'][number] | null,
): void {
  const verdict = walk.filter.classifyFile(path, name, rules.ignoredBy, rules.clean);
  if (verdict === 'outside') return;
  if (verdict !== 'candidate') return skip(walk, path, verdict.reason, verdict.detail, null);
  if (walk.followDepth > 0 && refusedThroughLink(walk, abs, path)) return;
  const size = stats === null ? Number.NaN : (stats[i * 3] as number);
  if (Number.isNaN(size) && deferred === null) return visitFile(walk, abs, path, name, rules, null);
  const file: ObservedFile = { source: walk.spec.name, path, absPath: abs, size: NO_SIZE, mtimeNs: '', inode: 0, sha256: null };
  const k = walk.result.files.push(file) - 1;
  if (Number.isNaN(size)) {
    (deferred as NonNullable<typeof deferred>).files.push(k);
    (deferred as NonNullable<typeof deferred>).entries.push(i);
  } else walk.sink.file(k, size, stats?.[i * 3 + 1] as number, stats?.[i * 3 + 2] as number);
}

/** Gives the deferred files their stats: the helper's, or (where it has none) an lstat here. */
export function takeDeferred(walk: Walk): void {
  for (const { listing, files, entries } of walk.deferred) {
    const stats = (walk.ahead as WalkAhead).statsOf(listing);
    for (let j = 0; j < files.length; j++) {
      const k = files[j] as number;
      const at = (entries[j] as number) * 3;
      if (stats !== null && !Number.isNaN(stats[at]))
        walk.sink.file(k, stats[at] as number, stats[at + 1] as number, stats[at + 2] as number);
      else statHere(walk, k);
    }
  }
  walk.deferred = [];
}

/** An lstat of a listed file (its index in result.files) on this thread, to the sink. */
function statHere(walk: Walk, k: number): void {
  let st: Stats | undefined;
  try {
    st = lstatSync((walk.result.files[k] as ScannedFile).absPath, { throwIfNoEntry: false });
  } catch (err) {
    return walk.sink.error(k, errorText(err));
  }
  if (st === undefined || !st.isFile()) return walk.sink.gone(k);
  walk.sink.file(k, st.size, st.mtimeMs, st.ino);
}

function visitLink(walk: Walk, abs: string, path: string, name: string, rules: DirRules): void {
  const verdict = walk.filter.classifyFile(path, name, rules.ignoredBy, rules.clean);
  if (verdict !== 'outside' && verdict !== 'candidate' && verdict.reason !== 'unsupported') {
    return skip(walk, path, verdict.reason, verdict.detail, null); // a secret's or an ignored name: not even resolved
  }
  // Listed only if it could hold or be an included file ("unsupported" may be a folder: no extension).
  const listed = verdict !== 'outside' || walk.filter.mayIncludeUnder(path);
  const skipLink = (detail: string): void => (listed ? skip(walk, path, 'symlink', detail, null) : undefined);
  if (!walk.spec.followSymlinks) return skipLink('symbolic link not followed (followSymlinks is off)');

  let real: string;
  let st: Stats;
  try {
    real = realpathSync(abs);
    // Checked before the target is even stat'ed: nothing outside the root is read.
    if (!isInside(walk.realRoot, real)) return skipLink('symbolic link points outside the source root: not followed');
    st = statSync(real);
  } catch (err) {
    return skipLink(`broken symbolic link (${errorText(err)})`);
  }
  // The target is held to the rules its own path is under: a link must not carry .git/config, a
  // secret or an ignored folder's files in under an innocent name.
  const rel = walk.targets.relative(real);
  const refused = walk.targets.refused(rel, st.isDirectory());
  if (refused !== null) {
    const detail = `symbolic link to ${rel}: ${refused.why}; ${refused.reason === 'secret' ? 'never read' : 'not followed'}`;
    return listed ? skip(walk, path, refused.reason, detail, null) : undefined;
  }
  if (st.isFile()) return visitFile(walk, real, path, name, rules, st, true);
  if (!st.isDirectory()) return visitOther(walk, real, real.slice(0, real.lastIndexOf('/')), path, name, rules);
  // Following a link to a folder that is (or holds) one being walked would never end.
  if (walk.realStack.some((walking) => isInside(real, walking)))
    return skipLink('symbolic link loops back to a folder being walked: not followed');
  walk.result.inPathOrder = false; // its files were placed as a file's name sorts, not a folder's
  // Below it, entries are listed under the link's path, and their real paths must pass the rules too:
  // an ignore file of a folder above the target, or an exclude naming the real path, still holds.
  walk.followDepth++;
  try {
    visitDir(walk, real, real, path, name, rules);
  } finally {
    walk.followDepth--;
  }
}

/** Skips a file found below a followed folder link when its real path is refused; true when it was. */
function refusedThroughLink(walk: Walk, abs: string, path: string): boolean {
  const refused = walk.targets.refused(walk.targets.relative(abs), false);
  if (refused !== null) skip(walk, path, refused.reason, throughLink(walk, abs, refused), null);
  return refused !== null;
}

/** The detail of an entry refused below a followed folder link. */
function throughLink(walk: Walk, real: string, refused: Refusal): string {
  return `reached through a symbolic link as ${walk.targets.relative(real)}: ${refused.why}; ${refused.reason === 'secret' ? 'never read' : 'not synced'}`;
}

/** Sockets, FIFOs, devices (and file-system entries of unknown type that turn out to be those). */
function visitOther(walk: Walk, abs: string, realDir: string, path: string, name: string, rules: DirRules): void {
  let st: Stats | undefined;
  try {
    st = lstatSync(abs, { throwIfNoEntry: false });
  } catch (err) {
    return skip(walk, path, 'unreadable', errorText(err), null);
  }
  if (st === undefined) return;
  // Some file systems report no type in readdir: decide from lstat.
  if (st.isFile()) return visitFile(walk, abs, path, name, rules, st);
  if (st.isDirectory()) {
    walk.result.inPathOrder = false; // placed as a file's name sorts (readdir gave no type)
    return visitDir(walk, abs, `${realDir}/${name}`, path, name, rules);
  }
  if (st.isSymbolicLink()) return visitLink(walk, abs, path, name, rules);
  const verdict = walk.filter.classifyFile(path, name, rules.ignoredBy, rules.clean);
  if (verdict === 'outside') return;
  skip(walk, path, 'unsupported', 'not a regular file', null);
}

export function skip(walk: Walk, path: string, reason: SkipReason, detail: string, size: number | null): void {
  walk.result.skipped.push({ source: walk.spec.name, path, reason, detail, size });
}

/** True when `path` is `dir` or below it (both real, absolute). */
function isInside(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
