/** Keys, names and ordering shared by the planner, the state and the reports. */

import { convertTypeOf } from '../../shared/file-types.js';

/** The key of a tracked file in PlanInput.tracked: `source + "\0" + path`. */
export function trackedKey(source: string, path: string): string {
  return `${source}\0${path}`;
}

/**
 * A file's name on the service: `source/path` when several sources are configured, else `path`; a
 * document converted to Markdown (no convertible type is one the service takes) adds `.md`.
 */
export function remoteNameFor(source: string, path: string, multiSource: boolean): string {
  const name = multiSource ? `${source}/${path}` : path;
  return convertTypeOf(path) === null ? name : `${name}.md`;
}

/**
 * True when `a` comes before (source, path) in compareByPath's order. Takes the key as strings, so a
 * hot loop (a lookup per walked file) makes no object to compare against.
 */
export function isBefore(a: { source: string; path: string }, source: string, path: string): boolean {
  return keyBefore(a.source, a.path, source, path);
}

/** True when (sa, pa) comes before (sb, pb) in compareByPath's order. */
export function keyBefore(sa: string, pa: string, sb: string, pb: string): boolean {
  return sa === sb ? pa < pb : sa < sb;
}

/** True when `list` is strictly increasing by (source, path): in compareByPath's order, no key twice. */
export function isStrictlyInPathOrder(list: readonly { source: string; path: string }[]): boolean {
  for (let i = 1; i < list.length; i++) {
    const b = list[i] as { source: string; path: string };
    if (!isBefore(list[i - 1] as { source: string; path: string }, b.source, b.path)) return false;
  }
  return true;
}

/** Orders by source, then path, by UTF-16 code units (locale-independent, so plans are reproducible). */
export function compareByPath(a: { source: string; path: string }, b: { source: string; path: string }): number {
  if (a.source !== b.source) return a.source < b.source ? -1 : 1;
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return 0;
}

/**
 * The first index in [0, n) whose entry is not before a key, in a list sorted by that order, where
 * `before(i)` says entry i is; n when none. Searched from `from` (the previous answer): when that
 * entry is before the key, probes from+1, from+2, from+4... then searches the bracket found; when
 * it is not but the one before it is, `from` is the answer; else a binary search below it. Queries
 * in ascending order cost a comparison or two each; any order is answered right.
 */
export function lowerBoundFrom(n: number, from: number, before: (i: number) => boolean): number {
  if (n === 0) return 0;
  const at = Math.min(Math.max(0, from), n - 1);
  let lo = 0;
  let hi: number;
  if (before(at)) {
    lo = at + 1;
    let step = 1;
    while (at + step < n && before(at + step)) {
      lo = at + step + 1;
      step *= 2;
    }
    hi = Math.min(at + step, n);
  } else {
    if (at === 0 || before(at - 1)) return at;
    hi = at - 1;
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A search of `list`, strictly in path order, by (source, path): the index found, or -1. Queries in
 * ascending order resume from the previous answer (see lowerBoundFrom). No key object per query.
 */
export function pathOrderedFinder(list: readonly { source: string; path: string }[]): (source: string, path: string) => number {
  let from = 0;
  return (source, path) => {
    from = lowerBoundFrom(list.length, from, (i) => isBefore(list[i] as { source: string; path: string }, source, path));
    const found = list[from];
    return found !== undefined && found.source === source && found.path === path ? from : -1;
  };
}
