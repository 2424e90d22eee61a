import { TrackedIndex } from '../tracked/tracked-index.js';
import type { ObservedFile, TrackedFile } from '../types.js';
import { isStrictlyInPathOrder, pathOrderedFinder, trackedKey } from '../tracked/keys.js';

/** Each observed file's tracked row (aligned with the files), and the tracked rows no file matched. */
export type Join = {
  /** The tracked index the rows are of. */
  tracked: TrackedIndex;
  /** Per observed file: its row in `tracked`, or -1. */
  rows: Int32Array;
  unmatched: TrackedFile[];
  /** True when the files were strictly increasing by (source, path): already in output order, no duplicates. */
  filesSorted: boolean;
  /** True when some observed file has this source and path. */
  hasFile: (source: string, path: string) => boolean;
};

/**
 * Pairs observed files with tracked rows, by row number: no key strings, no hashing, no object per
 * row. Files in (source, path) order, as the sources deliver them, make each lookup a comparison or
 * two (the index resumes from its last answer); any order gives the same result. `inPathOrder`:
 * the caller knows the files are strictly in (source, path) order (Observation.inPathOrder), so
 * that is not checked again.
 */
export function joinTracked(files: readonly ObservedFile[], tracked: ReadonlyMap<string, TrackedFile>, inPathOrder = false): Join {
  const index = TrackedIndex.from(tracked);
  const rows = new Int32Array(files.length);
  const matched = new Uint8Array(index.size);
  let matchedRows = 0;
  for (let i = 0; i < files.length; i++) {
    const f = files[i] as ObservedFile;
    const row = index.rowOf(f.source, f.path);
    rows[i] = row;
    if (row >= 0 && matched[row] === 0) {
      matched[row] = 1;
      matchedRows += 1;
    }
  }
  const unmatched: TrackedFile[] = [];
  if (matchedRows < matched.length)
    for (let row = 0; row < matched.length; row++) if (matched[row] === 0) unmatched.push(index.fileAt(row));
  const sorted = inPathOrder || isStrictlyInPathOrder(files);
  return { tracked: index, rows, unmatched, filesSorted: sorted, hasFile: sorted ? sortedSearch(files) : keySearch(files) };
}

/**
 * joinTracked for a delta plan (PlanInput.delta): the files are only those that may have changed, so
 * the rows left unmatched are not every other row but the scope's `vanished` rows no file matched.
 */
export function joinDelta(
  files: readonly ObservedFile[],
  tracked: ReadonlyMap<string, TrackedFile>,
  vanished: readonly number[],
  inPathOrder = false,
): Join {
  const index = TrackedIndex.from(tracked);
  const rows = new Int32Array(files.length);
  const matched = new Set<number>();
  for (let i = 0; i < files.length; i++) {
    const f = files[i] as ObservedFile;
    rows[i] = index.rowOf(f.source, f.path);
    if ((rows[i] as number) >= 0) matched.add(rows[i] as number);
  }
  const unmatched = vanished.filter((row) => !matched.has(row)).map((row) => index.fileAt(row));
  const sorted = inPathOrder || isStrictlyInPathOrder(files);
  return { tracked: index, rows, unmatched, filesSorted: sorted, hasFile: sorted ? sortedSearch(files) : keySearch(files) };
}

/** Membership in sorted files (the planner asks for its sorted skip entries: a comparison or two each). */
function sortedSearch(files: readonly ObservedFile[]): (source: string, path: string) => boolean {
  const find = pathOrderedFinder(files);
  return (source, path) => find(source, path) >= 0;
}

/** Membership in files in any order: a Set of keys, made on the first query. */
function keySearch(files: readonly ObservedFile[]): (source: string, path: string) => boolean {
  let present: Set<string> | undefined;
  return (source, path) => (present ??= new Set(files.map((f) => trackedKey(f.source, f.path)))).has(trackedKey(source, path));
}
