import { lstatSync } from 'node:fs';
import { errorText } from '../../shared/errors.js';
import type { SkipReason } from '../types.js';
import { IGNORE_FILE_NAMES, matchIgnoreRules, readIgnoreLevels, type IgnoreLevel } from './ignore-rules.js';
import { NEVER_DESCEND, type PathFilter } from './path-filter.js';
import { secretPatternOf } from './secrets.js';

/** Why a path reached through a followed link may not be synced: the skip reason and the rule that refuses it. */
export type Refusal = { reason: SkipReason; why: string };

/** The rules a followed symbolic link's target is held to: those of its own, real path. */
export type TargetRules = {
  /** A real absolute path inside the root, root-relative ("" for the root itself; the root may be "/"). */
  relative(real: string): string;
  /**
   * Why the path (`rel`: real, root-relative) may not be synced when a link leads to it, or null: a
   * folder on its way (or the path itself, a folder) never descended, ignored by an ignore file of
   * its own folders, or excluded; a file named like a secret, ignored or excluded.
   */
  refused(rel: string, isDir: boolean): Refusal | null;
};

/**
 * The target rules of one walk. Links are few: the ignore files of the targets' folders are read
 * when first needed, and each folder's verdict is kept for the rest of the walk.
 */
export function createTargetRules(realRoot: string, filter: PathFilter): TargetRules {
  const rootPrefix = realRoot.endsWith('/') ? realRoot : `${realRoot}/`;
  const levelsByDir = new Map<string, IgnoreLevel[]>();
  const folderVerdicts = new Map<string, Refusal | null>();

  /** The ignore levels in force for the entries of a folder (real, root-relative), root first. */
  const levelsOf = (dir: string): IgnoreLevel[] => {
    const known = levelsByDir.get(dir);
    if (known !== undefined) return known;
    const parent = dir === '' ? [] : levelsOf(parentOf(dir));
    const absDir = dir === '' ? realRoot : rootPrefix + dir;
    // Only regular files, as in the walk: a linked ignore file could point outside the root.
    const present = new Set(IGNORE_FILE_NAMES.filter((f) => lstatSync(`${absDir}/${f}`, { throwIfNoEntry: false })?.isFile() === true));
    const levels = present.size === 0 ? parent : [...parent, ...readIgnoreLevels(absDir, dir, present)];
    levelsByDir.set(dir, levels);
    return levels;
  };

  /** An ignore-file rule or an exclude glob that leaves `path` out (its folders above already passed). */
  const leftOut = (path: string, isDir: boolean, what: string): Refusal | null => {
    let ignored: string | null;
    try {
      ignored = matchIgnoreRules(levelsOf(parentOf(path)), path, isDir);
    } catch (err) {
      return { reason: 'unreadable', why: `an ignore file above it cannot be read (${errorText(err)})` };
    }
    const excluded = filter.folderExcludedBy(path);
    ignored ??= excluded === null ? null : `matches exclude: ${excluded}`;
    return ignored === null ? null : { reason: 'ignored', why: `${what} ${ignored}` };
  };

  const refusedFolder = (dir: string): Refusal | null => {
    const known = folderVerdicts.get(dir);
    if (known !== undefined) return known;
    const parent = parentOf(dir);
    const never = NEVER_DESCEND.get(dir.slice(dir.lastIndexOf('/') + 1));
    const verdict =
      (parent === '' ? null : refusedFolder(parent)) ??
      (never === undefined ? null : { reason: 'ignored' as const, why: `inside ${dir}/ (${never})` }) ??
      leftOut(dir, true, `folder ${dir}/`);
    folderVerdicts.set(dir, verdict);
    return verdict;
  };

  return {
    relative: (real) => (real.length <= rootPrefix.length ? '' : real.slice(rootPrefix.length)),
    refused(rel, isDir) {
      if (rel === '') return null; // the root itself: the walk's loop guard refuses it
      if (isDir) return refusedFolder(rel);
      const dir = parentOf(rel);
      const above = dir === '' ? null : refusedFolder(dir);
      if (above !== null) return above;
      const secret = secretPatternOf(rel.slice(rel.lastIndexOf('/') + 1));
      if (secret !== null) return { reason: 'secret', why: `named like ${secret}` };
      return leftOut(rel, false, 'the target');
    },
  };
}

/** The folder holding a root-relative path ("" at the top). */
function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}
