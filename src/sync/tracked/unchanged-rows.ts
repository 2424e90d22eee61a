import type { Fingerprint } from './columns.js';

/** What UnchangedRows asks of the tracked rows (a TrackedIndex answers it). */
export type RowsByPath = {
  readonly size: number;
  rowOf(source: string, path: string): number;
  /** True when nothing is to be done for the row's file if it has this fingerprint (TrackedIndex.settledAt). */
  settledAt(row: number, stat: Fingerprint): boolean;
};

/**
 * The tracked rows whose files a full walk found unchanged (ScanOptions.unchanged): the same
 * fingerprint as the row, and the row's remote copy there and not failed, so that a delta plan would
 * only count them (see planner/delta.ts). Such a file is marked here and dropped by the walk as soon
 * as its lstat is in: on a rescan of an unchanged 100k-file tree, the files then leave no object alive
 * past their lstat, instead of 100k objects and their strings living (and being copied by the GC)
 * until the walk ends.
 */
export class UnchangedRows {
  /** 1 for each row found unchanged, by row number (the rows' numbers when this was made). */
  readonly seen: Uint8Array;
  count = 0;
  readonly #rows: RowsByPath;
  readonly #observe: ((path: string) => boolean) | null;

  /** `observe`: true for a path whose file must be observed even when unchanged (a document whose converter changed). */
  constructor(rows: RowsByPath, observe: ((path: string) => boolean) | null = null) {
    this.#rows = rows;
    this.#observe = observe;
    this.seen = new Uint8Array(rows.size);
  }

  /** True, and the row marked, when the file at this path is unchanged; false: the file goes on to be observed. */
  take(source: string, path: string, stat: Fingerprint): boolean {
    if (this.#observe?.(path) === true) return false;
    const row = this.#rows.rowOf(source, path);
    if (row < 0 || this.seen[row] === 1 || !this.#rows.settledAt(row, stat)) return false;
    this.seen[row] = 1;
    this.count++;
    return true;
  }
}
