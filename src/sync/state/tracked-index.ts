import type { TrackedFile } from '../types.js';
import { compareByPath as compare, isBefore, trackedKey } from '../planner/keys.js';

/**
 * Tracked files in (source, path) order, as the planner's merge join wants them. It reads like a
 * ReadonlyMap keyed by trackedKey(source, path), but holds no Map: the loader adds rows already in
 * order, and find() searches the sorted list, resuming from its last answer, so that lookups made
 * in path order (the observer asks once per walked file) cost a comparison or two each. Filling a
 * Map of 100k paths instead costs more than reading them from SQLite.
 */
export class TrackedIndex implements ReadonlyMap<string, TrackedFile> {
  #files: TrackedFile[] = [];
  /** True while #files is strictly increasing, so searchable as it is. */
  #ordered = true;
  /** Where the last search ended: the next search in ascending order starts there. */
  #cursor = 0;

  /** An index over `files`; a later file with the same source and path replaces an earlier one. */
  static of(files: Iterable<TrackedFile>): TrackedIndex {
    const index = new TrackedIndex();
    for (const f of files) index.add(f);
    return index;
  }

  /** Adds a file (replacing the one with the same source and path). Cheapest in (source, path) order. */
  add(file: TrackedFile): void {
    const files = this.#files;
    const last = files[files.length - 1];
    if (last !== undefined && this.#ordered) {
      const c = compare(last, file);
      if (c === 0) {
        files[files.length - 1] = file;
        return;
      }
      if (c > 0) this.#ordered = false;
    }
    files.push(file);
  }

  /** The tracked file at this source and path. */
  find(source: string, path: string): TrackedFile | undefined {
    const files = this.#sorted();
    const at = this.#search(source, path);
    const f = files[at];
    return f !== undefined && f.source === source && f.path === path ? f : undefined;
  }

  get size(): number {
    return this.#sorted().length;
  }

  get(key: string): TrackedFile | undefined {
    const at = key.indexOf('\0');
    return at < 0 ? undefined : this.find(key.slice(0, at), key.slice(at + 1));
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  values(): MapIterator<TrackedFile> {
    return this.#sorted().values();
  }

  keys(): MapIterator<string> {
    return this.#sorted().map((f) => trackedKey(f.source, f.path)).values();
  }

  entries(): MapIterator<[string, TrackedFile]> {
    return this.#sorted().map((f): [string, TrackedFile] => [trackedKey(f.source, f.path), f]).values();
  }

  [Symbol.iterator](): MapIterator<[string, TrackedFile]> {
    return this.entries();
  }

  forEach(callback: (value: TrackedFile, key: string, map: ReadonlyMap<string, TrackedFile>) => void, thisArg?: unknown): void {
    for (const f of this.#sorted()) callback.call(thisArg, f, trackedKey(f.source, f.path), this);
  }

  /** The files strictly increasing: sorted (stably) and deduplicated, the last added winning, if they came out of order. */
  #sorted(): TrackedFile[] {
    if (this.#ordered) return this.#files;
    const sorted = this.#files.map((f, i) => ({ f, i })).sort((a, b) => compare(a.f, b.f) || a.i - b.i);
    this.#files = sorted.filter((e, k) => k === sorted.length - 1 || compare(e.f, (sorted[k + 1] as { f: TrackedFile }).f) !== 0).map((e) => e.f);
    this.#ordered = true;
    this.#cursor = 0;
    return this.#files;
  }

  /** The first index whose file is not before (source, path): galloping forward from the last answer, else a binary search. */
  #search(source: string, path: string): number {
    const files = this.#files;
    let lo = 0;
    let hi = files.length;
    const from = this.#cursor;
    const start = files[from];
    if (start !== undefined && isBefore(start, source, path)) {
      // Ascending queries: probe from+1, from+2, from+4... then search the bracket found.
      lo = from + 1;
      let step = 1;
      while (from + step < files.length && isBefore(files[from + step] as TrackedFile, source, path)) {
        lo = from + step + 1;
        step *= 2;
      }
      hi = Math.min(from + step, files.length);
    } else if (start !== undefined) {
      hi = from + 1;
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (isBefore(files[mid] as TrackedFile, source, path)) lo = mid + 1;
      else hi = mid;
    }
    this.#cursor = Math.min(lo, Math.max(0, files.length - 1));
    return lo;
  }
}
