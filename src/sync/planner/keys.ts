/** Keys, names and ordering shared by the planner, the state and the reports. */

/** The key of a tracked file in PlanInput.tracked: `source + "\0" + path`. */
export function trackedKey(source: string, path: string): string {
  return `${source}\0${path}`;
}

/** A file's name on the service: `source/path` when several sources are configured, else `path`. */
export function remoteNameFor(source: string, path: string, multiSource: boolean): string {
  return multiSource ? `${source}/${path}` : path;
}

/** Orders by source, then path, by UTF-16 code units (locale-independent, so plans are reproducible). */
export function compareByPath(a: { source: string; path: string }, b: { source: string; path: string }): number {
  if (a.source !== b.source) return a.source < b.source ? -1 : 1;
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return 0;
}
