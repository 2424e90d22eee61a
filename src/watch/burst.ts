import { lstatSync } from 'node:fs';
import { sep } from 'node:path';
import { IGNORE_FILE_NAMES } from '../sync/sources/ignore-rules.js';
import type { ScopeDir } from '../sync/sources/index.js';

/** The folders a cycle after a burst looks at, per source; null: every source, whole (a full cycle). */
export type BurstScope = ReadonlyMap<string, readonly ScopeDir[]> | null;

export type Burst = {
  /** Records an event's path; returns when it settled (its ctime; now for a path gone or not stat-able). */
  add(absPath: string): number;
  /** The next cycle looks at everything (a watcher error, an overflow): the walk is the truth. */
  whole(): void;
  /** Adds a source's path (root-relative) with no event: a file a cycle left to do (failed, unknown) is looked at again by the next. */
  carry(source: string, path: string): void;
  /** The scope of the events so far (null: whole), and a fresh start for the next burst. */
  take(): BurstScope;
  /** The scope of the events so far (null: whole), the burst left as it is. */
  peek(): BurstScope;
  /** Puts what the last take() took back into the burst (its cycle did not run): the next take() has it too. */
  untake(): void;
  /** The paths recorded since the last take() (none counted once the burst is whole), and whether it holds one. */
  size(): number;
  holds(source: string, path: string): boolean;
};

/** Past this many paths a burst is a full cycle: a scope that large costs more than one walk. */
export const BURST_MAX_PATHS = 5000;

/**
 * The paths of one burst of events of `kbsync watch`, per folder source. Events are hints: the cycle
 * does not take their word for what changed, it walks the folders they touched: the parent folder of
 * each path (its own entries: a create, an unlink, an atomic save's rename), and the path itself whole
 * if it is a folder (files made in a folder just made may have no event of their own); tracked rows
 * there that the walk does not find are the deletes (a folder deleted: every row below it). An ignore
 * file's folder is walked whole. A source whose links are followed, an event on a root or on its ignore
 * file, or too many paths make the burst a full cycle.
 */
export function createBurst(o: {
  sources: readonly { name: string; root: string; followSymlinks: boolean }[];
  nowMs: () => number;
  maxPaths?: number;
  /** Each event's lstat of a file, as it is taken (a file's sizes over time tell one still being written). */
  onFileStat?: (absPath: string, st: { size: number; ino: number }) => void;
  /** False: paths only, no lstat (add() then returns now): a burst kept for its scope, not its settling. */
  statPaths?: boolean;
}): Burst {
  const max = o.maxPaths ?? BURST_MAX_PATHS;
  let paths = new Map<string, Set<string>>();
  let count = 0;
  let whole = false;
  /** What the last take() took (see untake). */
  let taken: { paths: Map<string, Set<string>>; whole: boolean } | null = null;
  const sourceOf = (absPath: string): { name: string; rel: string } | 'whole' | null => {
    for (const s of o.sources) {
      if (absPath === s.root) return 'whole';
      if (!absPath.startsWith(s.root + sep)) continue;
      // A link followed may show one file under two names: only a full walk places it right.
      if (s.followSymlinks) return 'whole';
      return {
        name: s.name,
        rel: absPath
          .slice(s.root.length + 1)
          .split(sep)
          .join('/'),
      };
    }
    return null;
  };
  const record = (source: string, rel: string): void => {
    if (count >= max) {
      whole = true;
      paths = new Map();
      count = 0;
      return;
    }
    let set = paths.get(source);
    if (set === undefined) paths.set(source, (set = new Set()));
    if (!set.has(rel)) {
      set.add(rel);
      count++;
    }
  };
  return {
    size: () => count,
    holds: (source, path) => paths.get(source)?.has(path) === true,
    carry(source, path) {
      if (!whole) record(source, path);
    },
    add(absPath) {
      const now = o.nowMs();
      if (whole) return now;
      const at = sourceOf(absPath);
      if (at === null) return now;
      if (at === 'whole') {
        whole = true;
        paths = new Map();
        count = 0;
        return now;
      }
      record(at.name, at.rel);
      // An ignore file's rules hold for every folder below its own: that folder is walked whole.
      const slash = at.rel.lastIndexOf('/');
      if (IGNORE_FILE_NAMES.includes(at.rel.slice(slash + 1))) {
        if (slash < 0) whole = true;
        else record(at.name, at.rel.slice(0, slash));
      }
      if (whole) {
        paths = new Map();
        count = 0;
        return now;
      }
      if (o.statPaths === false) return now;
      // ctime: the last change to the file or its name, which no `touch` or `cp -p` sets back.
      let st;
      try {
        st = lstatSync(absPath, { throwIfNoEntry: false });
      } catch {
        st = undefined;
      }
      if (st?.isFile() === true) o.onFileStat?.(absPath, st);
      return st === undefined ? now : Math.min(now, st.ctimeMs);
    },
    whole() {
      whole = true;
      paths = new Map();
      count = 0;
    },
    peek: () => (whole ? null : scopeOf(paths)),
    take() {
      const scope = whole ? null : scopeOf(paths);
      taken = { paths, whole };
      whole = false;
      paths = new Map();
      count = 0;
      return scope;
    },
    untake() {
      const back = taken;
      taken = null;
      if (back === null) return;
      if (back.whole) whole = true;
      if (whole) {
        paths = new Map();
        count = 0;
        return;
      }
      for (const [source, set] of back.paths) for (const rel of set) record(source, rel);
    },
  };
}

/** The folders to walk for these paths of each source: each path whole, its parent's own entries; none twice. */
function scopeOf(paths: ReadonlyMap<string, ReadonlySet<string>>): BurstScope {
  const scope = new Map<string, ScopeDir[]>();
  for (const [source, set] of paths) {
    const deep = new Set<string>();
    const direct = new Set<string>();
    for (const p of set) {
      deep.add(p);
      const slash = p.lastIndexOf('/');
      direct.add(slash < 0 ? '' : p.slice(0, slash));
    }
    // A folder walked whole covers everything below it.
    const covered = (d: string, self: boolean): boolean => {
      if (self && deep.has(d)) return true;
      for (let at = d.lastIndexOf('/'); at > 0; at = d.lastIndexOf('/', at - 1)) if (deep.has(d.slice(0, at))) return true;
      return false;
    };
    const dirs: ScopeDir[] = [
      ...[...deep].filter((d) => !covered(d, false)).map((dir) => ({ dir, direct: false })),
      ...[...direct].filter((d) => d === '' || !covered(d, true)).map((dir) => ({ dir, direct: true })),
    ];
    scope.set(source, dirs);
  }
  return scope;
}
