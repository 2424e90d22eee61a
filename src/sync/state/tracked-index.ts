import type { TrackedFile } from '../types.js';
import { trackedKey } from './tracked-files.js';

/**
 * Tracked files by source, then by path, iterated in the order they were added (the loader adds
 * them in (source, path) order, which the planner's merge join relies on). It reads like a
 * ReadonlyMap keyed by trackedKey(source, path), but is filled without building a key string per
 * file: find(source, path) is the fast lookup; get(key) splits the key.
 */
export class TrackedIndex implements ReadonlyMap<string, TrackedFile> {
  readonly #files: TrackedFile[] = [];
  readonly #bySource = new Map<string, Map<string, TrackedFile>>();

  /** An index over `files`; a later file with the same source and path replaces an earlier one. */
  static of(files: Iterable<TrackedFile>): TrackedIndex {
    const index = new TrackedIndex();
    for (const f of files) index.add(f);
    return index;
  }

  /** Adds a file at the end of the order (or replaces the one with the same source and path, in place). */
  add(file: TrackedFile): void {
    let paths = this.#bySource.get(file.source);
    if (paths === undefined) this.#bySource.set(file.source, (paths = new Map()));
    const count = paths.size;
    paths.set(file.path, file);
    if (paths.size > count) this.#files.push(file);
    else this.#files[this.#files.findIndex((f) => f.source === file.source && f.path === file.path)] = file;
  }

  /** The tracked file at this source and path. */
  find(source: string, path: string): TrackedFile | undefined {
    return this.#bySource.get(source)?.get(path);
  }

  get size(): number {
    return this.#files.length;
  }

  get(key: string): TrackedFile | undefined {
    const at = key.indexOf('\0');
    return at < 0 ? undefined : this.find(key.slice(0, at), key.slice(at + 1));
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  values(): MapIterator<TrackedFile> {
    return this.#files.values();
  }

  keys(): MapIterator<string> {
    return this.#files.map((f) => trackedKey(f.source, f.path)).values();
  }

  entries(): MapIterator<[string, TrackedFile]> {
    return this.#files.map((f): [string, TrackedFile] => [trackedKey(f.source, f.path), f]).values();
  }

  [Symbol.iterator](): MapIterator<[string, TrackedFile]> {
    return this.entries();
  }

  forEach(callback: (value: TrackedFile, key: string, map: ReadonlyMap<string, TrackedFile>) => void, thisArg?: unknown): void {
    for (const f of this.#files) callback.call(thisArg, f, trackedKey(f.source, f.path), this);
  }
}
