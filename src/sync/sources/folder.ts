import { lstatSync, realpathSync, statSync } from 'node:fs';
import { errorText, KbsyncError } from '../../shared/errors.js';
import { IGNORE_FILE_NAMES, readIgnoreLevels, type IgnoreLevel } from './ignore-rules.js';
import { mtimeNsOfMs } from './fingerprint.js';
import { createTargetRules } from './link-targets.js';
import { createPathFilter, hasControlCharacter } from './path-filter.js';
import { StatPool, type StatPoolOptions, type StatSink } from './stat-pool.js';
import type { UnchangedRows } from '../tracked/unchanged-rows.js';
import type { WalkAhead } from './walk-ahead.js';
import {
  NO_SIZE,
  leftOut,
  skip,
  takeDeferred,
  walkDir,
  type FolderSourceSpec,
  type ScannedFile,
  type ScanResult,
  type Walk,
} from './folder-walk.js';

export type { FolderSourceSpec, ScannedFile, ScanResult } from './folder-walk.js';

export type ScanOptions = {
  /**
   * Sees each candidate file as soon as it is found, in walk order (every lstat is then done on
   * this thread, as the walk goes).
   */
  onFile?: ((file: ScannedFile) => void) | null;
  /** How a walk without onFile shares its lstats with a helper thread (see StatPool); false: never. */
  statPool?: StatPoolOptions | false;
  /**
   * A helper started on this source's root before the walk (see WalkAhead): the walk takes the
   * folders' listings and lstats from it. Not used with onFile.
   */
  ahead?: WalkAhead | null;
  /**
   * Walk only these folders (root-relative, "" for the root; a folder that is gone or is not one
   * gives nothing): each whole, or with `direct`, its own entries only. The rules in force there (the
   * ignore files of the folders above, the globs) are the full walk's. Files then come sorted by path.
   */
  scope?: readonly ScopeDir[] | null;
  /**
   * A full walk's files that UnchangedRows finds unchanged once lstat'ed are marked there and not
   * returned (`kbsync watch`'s rescans: a delta plan only counts them). Not with onFile or scope.
   */
  unchanged?: UnchangedRows | null;
};

/** A folder of a scoped walk (ScanOptions.scope). */
export type ScopeDir = { dir: string; direct: boolean };

/** What stands in result.files for a file dropped as unchanged (filtered out at the end with those of NO_SIZE). */
const DROPPED: ScannedFile = Object.freeze({ source: '', path: '', absPath: '', size: NO_SIZE, mtimeNs: '', inode: 0 });

/**
 * Walks a folder source synchronously (readdir with file types + one lstat per candidate: the
 * fastest walk Node has, docs/benchmarks.md); the lstats of a large folder are shared
 * with a helper thread. Paths are POSIX and root-relative; files come sorted by path (plain string
 * order; a followed folder link may break it). Never reads a file's content, nor anything outside
 * the root. Throws `source_unavailable` when the root itself is missing or not a folder.
 */
export function scanFolder(spec: FolderSourceSpec, options: ScanOptions = {}): ScanResult {
  let realRoot: string;
  try {
    realRoot = realpathSync(spec.root);
    if (!statSync(realRoot).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    throw new KbsyncError('source_unavailable', `source "${spec.name}": cannot read folder ${spec.root} (${errorText(err)})`, {
      cause: err,
    });
  }
  const onFile = options.onFile ?? null;
  const unchanged = onFile === null && options.scope == null ? (options.unchanged ?? null) : null;
  const result: ScanResult = { files: [], skipped: [], inPathOrder: true };
  const { files } = result;
  let dropped = 0;
  const sink: StatSink<number> = {
    file(k, size, mtimeMs, ino) {
      const file = files[k] as ScannedFile;
      file.size = size;
      file.mtimeNs = mtimeNsOfMs(mtimeMs);
      file.inode = ino;
      if (unchanged !== null && unchanged.take(spec.name, file.path, file)) {
        files[k] = DROPPED;
        dropped++;
      }
    },
    gone: () => void dropped++, // gone (or replaced) since readdir: the next pass sees it
    error(k, message) {
      dropped++;
      result.skipped.push({ source: spec.name, path: (files[k] as ScannedFile).path, reason: 'unreadable', detail: message, size: null });
    },
  };
  const ahead = onFile === null ? (options.ahead ?? null) : null;
  const filter = createPathFilter(spec.include, spec.exclude, spec.convert);
  const walk: Walk = {
    spec,
    onFile,
    filter,
    pool:
      onFile === null && ahead === null && options.statPool !== false && options.scope == null
        ? new StatPool(sink, options.statPool)
        : null,
    ahead,
    deferred: [],
    sink,
    unchanged,
    realRoot,
    realStack: [],
    followDepth: 0,
    targets: createTargetRules(realRoot, filter),
    result,
    direct: false,
  };
  try {
    if (options.scope != null) walkScope(walk, options.scope);
    else walkDir(walk, spec.root, realRoot, '', [], ahead !== null && ahead.lists(spec.root));
    takeDeferred(walk);
  } finally {
    walk.pool?.finish();
  }
  if (dropped > 0) result.files = files.filter((f) => f.size !== NO_SIZE);
  return result;
}

/**
 * Walks each folder of a scope (ScanOptions.scope) under the rules the full walk would hold it to: the
 * ignore files of the folders above are read, and a folder above that the walk would leave out leaves
 * the scope folder out the same way (its skip entry, no files).
 */
function walkScope(walk: Walk, scope: readonly ScopeDir[]): void {
  for (const { dir, direct } of scope) {
    let levels: readonly IgnoreLevel[] = [];
    let absDir = walk.spec.root;
    let rel = '';
    let open = true;
    for (const name of dir === '' ? [] : dir.split('/')) {
      levels = [...levels, ...readIgnoreLevels(absDir, rel, ignoreFilesIn(absDir))];
      rel = rel === '' ? name : `${rel}/${name}`;
      absDir = `${absDir}/${name}`;
      const st = lstatSync(absDir, { throwIfNoEntry: false });
      if (st === undefined || !st.isDirectory()) {
        open = false;
        break;
      }
      const left = leftOut(walk, rel, name, { levels, ignoredBy: () => null, clean: !hasControlCharacter(rel) });
      if (left !== undefined) {
        if (left !== null) skip(walk, rel, 'ignored', left, null);
        open = false;
        break;
      }
    }
    if (!open) continue;
    walk.direct = direct;
    try {
      walkDir(walk, absDir, dir === '' ? walk.realRoot : `${walk.realRoot}/${dir}`, dir, levels, false);
    } finally {
      walk.direct = false;
    }
  }
  walk.result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The ignore files present (as regular files) in a folder. */
function ignoreFilesIn(absDir: string): Set<string> {
  const present = new Set<string>();
  for (const name of IGNORE_FILE_NAMES) if (lstatSync(`${absDir}/${name}`, { throwIfNoEntry: false })?.isFile() === true) present.add(name);
  return present;
}
