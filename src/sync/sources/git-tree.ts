import { lstatSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { errorText, KbsyncError } from '../../shared/errors.js';
import type { ScanResult } from './folder.js';
import { createPathIgnoreChecker, parseIgnoreLevel, type IgnoreLevel } from './ignore-rules.js';
import { createPathFilter, NEVER_DESCEND } from './path-filter.js';
import { mtimeNsOf } from './fingerprint.js';
import type { SkipReason } from '../types.js';
import type { ConvertType } from '../../shared/file-types.js';

/** A checked-out git source and the rules its files go through. */
export type GitTreeSpec = {
  name: string;
  checkoutDir: string;
  /** Absolute source root: the checkout or its subdir. */
  root: string;
  subdir: string;
  include: readonly string[];
  exclude: readonly string[];
  followSymlinks: boolean;
  convert?: readonly ConvertType[];
};

type Entry = { mode: string; path: string };

const KBSYNCIGNORE = '.kbsyncignore';

/**
 * Turns `git ls-files --stage -z` output into candidate files (stat'ed in the checkout) and skipped
 * paths: the same include/exclude, secret and type rules as a folder, plus `.kbsyncignore` files
 * (`.gitignore` is moot: git lists tracked files only). Submodules are skipped, never entered.
 */
export function listGitTree(spec: GitTreeSpec, lsFilesOutput: string): ScanResult {
  const result: ScanResult = { files: [], skipped: [] };
  const skip = (path: string, reason: SkipReason, detail: string, size: number | null): void => {
    result.skipped.push({ source: spec.name, path, reason, detail, size });
  };
  const entries = parseLsFiles(lsFilesOutput, spec.subdir);
  const isIgnored = createPathIgnoreChecker(readKbsyncIgnores(spec, entries));
  const filter = createPathFilter(spec.include, spec.exclude, spec.convert);
  const tracked = new Map(entries.map((e) => [e.path, e.mode]));
  let realRoot: string | null = null;
  const reportedFolders = new Set<string>();

  /** Why a followed link's target (`rel`: real, root-relative) is not synced, or null. */
  const refusedTarget = (rel: string): { reason: SkipReason; detail: string } | null => {
    const to = `symbolic link to ${rel}`;
    if (!(tracked.get(rel) ?? '').startsWith('100'))
      return { reason: 'symlink', detail: `${to}: not a file git tracks in this source; not followed` };
    const never = neverSyncedFolder(rel);
    if (never !== null) return { reason: 'ignored', detail: `${to}: inside ${never.folder}/ (${never.detail}); not followed` };
    const target = filter.classifyFile(rel, rel.slice(rel.lastIndexOf('/') + 1), isIgnored);
    if (target === 'outside' || target === 'candidate' || target.reason === 'unsupported') return null;
    return { reason: target.reason, detail: `${to}: ${target.detail}${target.reason === 'secret' ? '' : '; not followed'}` };
  };

  for (const { mode, path } of entries) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const verdict = filter.classifyFile(path, name, isIgnored);
    if (verdict === 'outside') continue;
    const never = neverSyncedFolder(path);
    if (never !== null) {
      // Listed once, as a folder walk lists it: git tracks a committed node_modules file by file.
      if (!reportedFolders.has(never.folder)) skip(never.folder, 'ignored', never.detail, null);
      reportedFolders.add(never.folder);
      continue;
    }
    if (mode === '160000') {
      skip(path, 'ignored', 'git submodule: not synced', null);
      continue;
    }
    // As in a folder walk, a file that is not a candidate is not even stat'ed (its size is not worth a
    // syscall: a docs repo is often a fifth images); only a link of an unsupported name is looked at,
    // to be reported as the link it is.
    if (verdict !== 'candidate' && (verdict.reason !== 'unsupported' || mode !== '120000')) {
      skip(path, verdict.reason, verdict.detail, null);
      continue;
    }
    let abs = `${spec.root}/${path}`;
    let st: Stats | undefined;
    try {
      if (mode === '120000') {
        if (!spec.followSymlinks) {
          skip(path, 'symlink', 'symbolic link not followed (followSymlinks is off)', null);
          continue;
        }
        abs = realpathSync(abs);
        realRoot ??= realpathSync(spec.root);
        if (!abs.startsWith(`${realRoot}/`)) {
          skip(path, 'symlink', 'symbolic link points outside the source root: not followed', null);
          continue;
        }
        // Only to a file git tracks, itself allowed: never into .git, an untracked file of a user's
        // checkout (an .env), a secret, or an ignored or excluded path under an innocent name.
        const refused = refusedTarget(abs.slice(realRoot.length + 1));
        if (refused !== null) {
          skip(path, refused.reason, refused.detail, null);
          continue;
        }
        st = statSync(abs);
      } else {
        st = lstatSync(abs, { throwIfNoEntry: false });
      }
    } catch (err) {
      skip(path, mode === '120000' ? 'symlink' : 'unreadable', errorText(err), null);
      continue;
    }
    if (st === undefined || !st.isFile()) {
      skip(path, 'unreadable', 'listed by git but not a regular file in the checkout', null);
      continue;
    }
    if (verdict !== 'candidate') {
      skip(path, verdict.reason, verdict.detail, st.size);
      continue;
    }
    result.files.push({ source: spec.name, path, absPath: abs, size: st.size, mtimeNs: mtimeNsOf(st), inode: st.ino });
  }
  return result;
}

const NEVER_MARKERS = [...NEVER_DESCEND.keys()].map((name) => `${name}/`);

/** The folder (`node_modules` or `.git`, and the path up to it) a tracked path lies in, never synced; or null. */
export function neverSyncedFolder(path: string): { folder: string; detail: string } | null {
  if (!NEVER_MARKERS.some((marker) => path.includes(marker))) return null; // nearly every path: no split
  const segments = path.split('/');
  for (let i = 0; i < segments.length - 1; i++) {
    const detail = NEVER_DESCEND.get(segments[i] as string);
    if (detail !== undefined) return { folder: segments.slice(0, i + 1).join('/'), detail };
  }
  return null;
}

/** Entries of `ls-files --stage -z` ("<mode> <object> <stage>\t<path>"), paths made subdir-relative. */
function parseLsFiles(output: string, subdir: string): Entry[] {
  const prefix = subdir === '' ? '' : `${subdir}/`;
  const entries: Entry[] = [];
  for (const record of output.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const full = record.slice(tab + 1);
    if (!full.startsWith(prefix)) continue;
    entries.push({ mode: record.slice(0, record.indexOf(' ')), path: full.slice(prefix.length) });
  }
  return entries;
}

/** The `.kbsyncignore` files git tracks in the source, parsed, keyed by their folder. */
function readKbsyncIgnores(spec: GitTreeSpec, entries: readonly Entry[]): Map<string, IgnoreLevel[]> {
  const levels = new Map<string, IgnoreLevel[]>();
  for (const { mode, path } of entries) {
    if (!(path === KBSYNCIGNORE || path.endsWith(`/${KBSYNCIGNORE}`)) || !mode.startsWith('100')) continue;
    const dir = path === KBSYNCIGNORE ? '' : path.slice(0, -KBSYNCIGNORE.length - 1);
    let text: string;
    try {
      text = readFileSync(`${spec.root}/${path}`, 'utf8');
    } catch (err) {
      throw new KbsyncError('source_unavailable', `source "${spec.name}": cannot read ${path} (${errorText(err)})`, { cause: err });
    }
    levels.set(dir, [parseIgnoreLevel(dir, KBSYNCIGNORE, text)]);
  }
  return levels;
}
