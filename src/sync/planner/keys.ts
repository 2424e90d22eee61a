/** Keys, names and ordering shared by the planner, the state and the reports. */

/** The key of a tracked file in PlanInput.tracked: `source + "\0" + path`. */
export function trackedKey(source: string, path: string): string {
  return `${source}\0${path}`;
}

/** A file's name on the service: `source/path` when several sources are configured, else `path`. */
export function remoteNameFor(source: string, path: string, multiSource: boolean): string {
  return multiSource ? `${source}/${path}` : path;
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
 * A search of `list`, strictly in path order, by (source, path): the index found, or -1. Queries in
 * ascending order resume from the previous answer's position (exponential search forward, then a
 * binary search in the bracket), so a pass in order costs about a comparison per entry; any other
 * order is answered right too. No key object is made per query.
 */
export function pathOrderedFinder(list: readonly { source: string; path: string }[]): (source: string, path: string) => number {
  let from = 0;
  let asked = false;
  let lastSource = '';
  let lastPath = '';
  return (source, path) => {
    if (!asked || keyBefore(source, path, lastSource, lastPath)) from = 0;
    asked = true;
    lastSource = source;
    lastPath = path;
    let step = 1;
    let lo = from;
    let hi = from;
    while (hi < list.length && isBefore(list[hi] as { source: string; path: string }, source, path)) {
      lo = hi + 1;
      hi = from + step;
      step *= 2;
    }
    hi = Math.min(hi, list.length);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (isBefore(list[mid] as { source: string; path: string }, source, path)) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
    const found = list[lo];
    return found !== undefined && found.source === source && found.path === path ? lo : -1;
  };
}
