import type { Beside } from '../sync/executor/prepare.js';
import type { ScopeDir } from '../sync/sources/index.js';
import type { TrackedIndex } from '../sync/tracked/tracked-index.js';
import type { ObservedFile, SkippedPath } from '../sync/types.js';

/** A scope's folders of one source: walked whole (deep), or their own entries only (direct). */
type Cover = { deep: ReadonlySet<string>; direct: ReadonlySet<string> };

/** What a whole delta plan found (PreparedPlan: its observation and wholeDelta), to make a baseline of. */
export type BaselineFindings = {
  files: readonly ObservedFile[];
  skipped: readonly SkippedPath[];
  vanished: readonly number[];
  /** 1 for each row of the index the plan counted unchanged. */
  counted: Uint8Array;
};

/** One source's folders holding files counted unchanged, sorted, with how many each holds. */
type DirCounts = { dirs: string[]; counts: number[] };

/**
 * What a whole delta plan of the daemon found (the files and skip entries it planned, the rows it
 * found vanished, and per folder the files it counted unchanged), kept so that the next plans walk
 * only the folders changed since: beside a scope, nothing moved, so the whole plan's findings there
 * still hold (plan-answer.ts says when that is so).
 */
export class PlanBaseline {
  readonly tracked: TrackedIndex;
  readonly #files: readonly ObservedFile[];
  readonly #skipped: readonly SkippedPath[];
  readonly #vanished: readonly { source: string; path: string }[];
  readonly #unchanged: number;
  readonly #counts = new Map<string, DirCounts>();

  constructor(tracked: TrackedIndex, found: BaselineFindings) {
    this.tracked = tracked;
    this.#files = found.files;
    this.#skipped = found.skipped;
    this.#vanished = found.vanished.map((row) => ({ source: tracked.sourceAt(row), path: tracked.pathAt(row) }));
    const bySource = new Map<string, Map<string, number>>();
    let unchanged = 0;
    // Rows come in path order: a folder's files mostly follow one another, so its name is sliced once a run.
    let source = '';
    let dir = '';
    let counts: Map<string, number> | null = null;
    for (let row = 0; row < found.counted.length; row++) {
      if (found.counted[row] !== 1) continue;
      unchanged++;
      const rowSource = tracked.sourceAt(row);
      const path = tracked.pathAt(row);
      const slash = path.lastIndexOf('/');
      if (counts === null || rowSource !== source || !(slash === dir.length && path.startsWith(dir))) {
        source = rowSource;
        dir = slash < 0 ? '' : path.slice(0, slash);
        counts = bySource.get(source) ?? new Map<string, number>();
        bySource.set(source, counts);
      }
      counts.set(dir, (counts.get(dir) ?? 0) + 1);
    }
    this.#unchanged = unchanged;
    for (const [name, map] of bySource) {
      const dirs = [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      this.#counts.set(name, { dirs, counts: dirs.map((d) => map.get(d) as number) });
    }
  }

  /** What the whole plan found outside `scope` (DeltaPass.beside), the vanished rows as rows of `tracked` now. */
  beside(scope: ReadonlyMap<string, readonly ScopeDir[]>, tracked: TrackedIndex): Beside {
    const covers = new Map<string, Cover>();
    for (const [source, dirs] of scope)
      covers.set(source, {
        deep: new Set(dirs.filter((d) => !d.direct).map((d) => d.dir)),
        direct: new Set(dirs.filter((d) => d.direct).map((d) => d.dir)),
      });
    const outside = (p: { source: string; path: string }): boolean => !covered(covers.get(p.source), p.path);
    const vanished: number[] = [];
    for (const v of this.#vanished.filter(outside)) {
      const row = tracked.rowOf(v.source, v.path);
      if (row >= 0) vanished.push(row);
    }
    let inScope = 0;
    for (const [source, cover] of covers) inScope += this.#countedIn(source, cover);
    return {
      files: this.#files.filter(outside),
      skipped: this.#skipped.filter(outside),
      vanished,
      unchanged: this.#unchanged - inScope,
    };
  }

  /** The files counted unchanged in the folders `cover` walks of one source. */
  #countedIn(source: string, cover: Cover): number {
    const c = this.#counts.get(source);
    if (c === undefined) return 0;
    const taken = new Set<number>();
    for (const d of cover.direct) {
      const at = lowerBound(c.dirs, d);
      if (c.dirs[at] === d) taken.add(at);
    }
    for (const d of cover.deep) {
      // The folder itself, then every folder below it: "d/..." sorts before "d0" ('0' follows '/').
      const start = d === '' ? 0 : lowerBound(c.dirs, d);
      const end = d === '' ? c.dirs.length : lowerBound(c.dirs, `${d}0`);
      for (let at = start; at < end; at++) {
        const dir = c.dirs[at] as string;
        if (d === '' || dir === d || dir.startsWith(`${d}/`)) taken.add(at);
      }
    }
    let n = 0;
    for (const at of taken) n += c.counts[at] as number;
    return n;
  }
}

/** True when a scope's walk of one source looks at `path`: its folder's own entries, or a folder above it whole. */
function covered(cover: Cover | undefined, path: string): boolean {
  if (cover === undefined) return false;
  const slash = path.lastIndexOf('/');
  if (cover.direct.has(slash < 0 ? '' : path.slice(0, slash))) return true;
  if (cover.deep.has('') || cover.deep.has(path)) return true;
  for (let at = slash; at > 0; at = path.lastIndexOf('/', at - 1)) if (cover.deep.has(path.slice(0, at))) return true;
  return false;
}

/** The first index of `sorted` whose string is not below `key`. */
function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
