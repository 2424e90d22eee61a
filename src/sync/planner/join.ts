import type { ObservedFile, TrackedFile } from '../types.js';
import { isBefore, isStrictlyInPathOrder, keyBefore, trackedKey } from './keys.js';

/** Each observed file's tracked row (aligned with the files), and the tracked rows no file matched. */
export type Join = {
  rows: (TrackedFile | undefined)[];
  unmatched: TrackedFile[];
  /** True when the files were strictly increasing by (source, path): already in output order, no duplicates. */
  filesSorted: boolean;
  /** True when some observed file has this source and path. */
  hasFile: (source: string, path: string) => boolean;
};

/**
 * Pairs observed files with tracked rows. When both come sorted by (source, path), as the sources
 * and the state deliver them, a merge join does it with string comparisons only: no key strings,
 * no hashing (about 10x faster on 100k files than a Map lookup per file). Otherwise, or if either
 * list turns out unsorted midway, it falls back to one Map lookup per file. Same result either way.
 */
export function joinTracked(files: readonly ObservedFile[], tracked: ReadonlyMap<string, TrackedFile>): Join {
  const sorted = isStrictlyInPathOrder(files);
  return (sorted && mergeJoin(files, tracked)) || hashJoin(files, tracked, sorted);
}

/** a < b by source, then path (UTF-16 code units). */
function before(a: { source: string; path: string }, b: { source: string; path: string }): boolean {
  return isBefore(a, b.source, b.path);
}

/** The merge join; null as soon as the tracked rows prove unsorted. */
function mergeJoin(files: readonly ObservedFile[], tracked: ReadonlyMap<string, TrackedFile>): Join | null {
  const rows = new Array<TrackedFile | undefined>(files.length);
  const unmatched: TrackedFile[] = [];
  const it = tracked.values();
  let prev: TrackedFile | undefined;
  let t = it.next().value;
  const advance = (): boolean => {
    if (t !== undefined && prev !== undefined && !before(prev, t)) return false;
    prev = t;
    t = it.next().value;
    return true;
  };
  for (let i = 0; i < files.length; i++) {
    const f = files[i] as ObservedFile;
    while (t !== undefined && before(t, f)) {
      unmatched.push(t);
      if (!advance()) return null;
    }
    if (t !== undefined && t.source === f.source && t.path === f.path) {
      rows[i] = t;
      if (!advance()) return null;
    } else {
      rows[i] = undefined;
    }
  }
  while (t !== undefined) {
    unmatched.push(t);
    if (!advance()) return null;
  }
  return { rows, unmatched, filesSorted: true, hasFile: sortedSearch(files) };
}

/**
 * Membership in sorted files. Queries in ascending order (the planner asks for its sorted skip
 * entries) resume from the previous answer's position, so a pass costs about one comparison per file.
 */
function sortedSearch(files: readonly ObservedFile[]): (source: string, path: string) => boolean {
  let from = 0;
  let asked = false;
  let lastSource = '';
  let lastPath = '';
  return (source, path) => {
    // No key object per query: one is asked for each skip entry (a fifth of a docs tree).
    if (!asked || keyBefore(source, path, lastSource, lastPath)) from = 0;
    asked = true;
    lastSource = source;
    lastPath = path;
    let step = 1;
    let lo = from;
    let hi = from;
    // Exponential search forward from the last position, then binary search within the bracket.
    while (hi < files.length && isBefore(files[hi] as ObservedFile, source, path)) {
      lo = hi + 1;
      hi = from + step;
      step *= 2;
    }
    hi = Math.min(hi, files.length);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (isBefore(files[mid] as ObservedFile, source, path)) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
    const f = files[lo];
    return f !== undefined && f.source === source && f.path === path;
  };
}

/** One Map lookup per file; the unmatched rows are searched for only when fewer rows matched than exist. */
function hashJoin(files: readonly ObservedFile[], tracked: ReadonlyMap<string, TrackedFile>, filesSorted: boolean): Join {
  const rows = new Array<TrackedFile | undefined>(files.length);
  const keys = new Array<string>(files.length);
  let matched = 0;
  for (let i = 0; i < files.length; i++) {
    const f = files[i] as ObservedFile;
    const key = trackedKey(f.source, f.path);
    keys[i] = key;
    const t = tracked.get(key);
    rows[i] = t;
    if (t !== undefined) matched += 1;
  }
  let present: Set<string> | undefined;
  const presentKeys = (): Set<string> => (present ??= new Set(keys));
  const hasFile = (source: string, path: string): boolean => presentKeys().has(trackedKey(source, path));
  if (matched === tracked.size) return { rows, unmatched: [], filesSorted, hasFile };
  const unmatched: TrackedFile[] = [];
  for (const [key, t] of tracked) if (!presentKeys().has(key)) unmatched.push(t);
  return { rows, unmatched, filesSorted, hasFile };
}
