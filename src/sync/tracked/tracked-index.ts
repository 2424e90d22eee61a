import { keyBefore, lowerBoundFrom, trackedKey } from './keys.js';
import { DETAIL_FIELDS } from './fields.js';
import type { Fingerprint, TrackedColumns } from './columns.js';
import { PendingDetails } from './pending-details.js';
import { joinedColumn, spliceColumn, type IndexColumn } from './packed-column.js';
import { rowsHoldingSha256 } from './sha256-column.js';
import { sameMtime } from './mtime-column.js';
import type { RemoteStatus, TrackedFile } from '../types.js';
import {
  checkLength,
  COLUMN_NAMES,
  CORE_COLUMNS,
  DETAIL_COLUMNS,
  emptyRows,
  fileOfRow,
  increasingFrom,
  sortedRows,
  type Rows,
} from './rows.js';

/**
 * Tracked files in (source, path) order, as columns. It reads like a ReadonlyMap keyed by
 * trackedKey(source, path), but holds no Map and, until asked, no object per file: the hot paths
 * (the observer's fingerprint check, the planner's join and its unchanged items) read the columns
 * by row number. A TrackedFile is made when one is asked for, once per row. A large state loads
 * faster than as objects, and leaves one object fewer per file for the GC.
 *
 * Lookups search the sorted rows, resuming from the last answer, so that lookups made in path
 * order (the observer asks once per walked file) cost a comparison or two each. Row numbers hold
 * until the next add() or addColumns(), which may reorder the rows.
 */
export class TrackedIndex implements ReadonlyMap<string, TrackedFile> {
  #rows: Rows = emptyRows();
  /** Detail columns not decoded yet (see PendingDetails). */
  readonly #details = new PendingDetails();
  /** True while the rows are strictly increasing, so searchable as they are. */
  #ordered = true;
  /** Where the last search ended: the next search in ascending order starts there. */
  #cursor = 0;
  /** The service's reason for a failed remote copy (read from the state when a failed row's TrackedFile is made). */
  remoteErrorOf: ((source: string, path: string) => string | null) | undefined;
  /** Told of each put(), before it changes the row: a plan kept beside the index learns which paths moved. */
  onPut: ((source: string, path: string) => void) | null = null;

  /** An index over `files`; a later file with the same source and path replaces an earlier one. */
  static of(files: Iterable<TrackedFile>): TrackedIndex {
    const index = new TrackedIndex();
    for (const f of files) index.add(f);
    return index;
  }

  /** `tracked` itself when it is an index, else an index over its values. */
  static from(tracked: ReadonlyMap<string, TrackedFile>): TrackedIndex {
    return tracked instanceof TrackedIndex ? tracked : TrackedIndex.of(tracked.values());
  }

  /**
   * Appends one source's rows. Cheapest when the sources come in name order with their paths in
   * order (as the state reads them). The first source's arrays are taken as they are, not copied:
   * the index owns them from then on (it may change them); a later source's are appended.
   */
  addColumns(source: string, columns: TrackedColumns): void {
    const n = columns.paths.length;
    for (const name of CORE_COLUMNS) checkLength(source, name, columns[name].length, n);
    const rows = this.#rows;
    const before = rows.paths.length;
    for (const name of CORE_COLUMNS)
      (rows[name] as IndexColumn) = before === 0 ? columns[name] : joinedColumn([rows[name] as IndexColumn, columns[name]]);
    rows.sources = before === 0 ? new Array<string>(n).fill(source) : rows.sources.concat(new Array<string>(n).fill(source));
    // The objects made and the pending details are written by row when made or decoded: no slots
    // (8 bytes a row each) are set aside for them.
    const { details } = columns;
    if (typeof details === 'function') {
      this.#details.add({ source, start: before, count: n, decode: details, detailsOf: columns.detailsOf });
    } else {
      for (const name of DETAIL_COLUMNS) {
        checkLength(source, name, details[name].length, n);
        if (rows[name].length < before) rows[name].length = before;
        (rows[name] as unknown[]) = before === 0 ? details[name] : (rows[name] as unknown[]).concat(details[name]);
      }
    }
    if (this.#ordered) this.#ordered = increasingFrom(rows, Math.max(0, before - 1));
  }

  /** Adds a file (replacing the one with the same source and path). Cheapest in (source, path) order. */
  add(file: TrackedFile): void {
    this.#details.decodeAll(this.#rows); // a replaced row must not get its old details back later
    const rows = this.#rows;
    const last = rows.paths.length - 1;
    if (last >= 0 && this.#ordered) {
      const lastSource = rows.sources[last] as string;
      const lastPath = rows.paths[last] as string;
      if (lastSource === file.source && lastPath === file.path) {
        this.#setRow(last, file);
        return;
      }
      if (!keyBefore(lastSource, lastPath, file.source, file.path)) this.#ordered = false;
    }
    this.#setRow(last + 1, file);
  }

  /**
   * Reads the details still to be read (attempts, last action and reason, time): made for code that
   * is about to change the state the index was read from, and wants every row as it was.
   */
  loadDetails(): void {
    this.#details.decodeAll(this.#rows);
  }

  /**
   * Puts one file in its place (replacing the row at its source and path, or inserting it in order),
   * or removes the row when `file` is null: an update of a kept index after a sync wrote a few rows
   * (see the daemon). Each insert or removal moves the rows after it: for a few, not for a bulk.
   */
  put(source: string, path: string, file: TrackedFile | null): void {
    this.onPut?.(source, path);
    this.#sort();
    this.#details.decodeAll(this.#rows);
    const rows = this.#rows;
    const at = this.#search(source, path);
    const found = at < rows.paths.length && rows.paths[at] === path && rows.sources[at] === source;
    if (file !== null && found) return this.#setRow(at, file);
    if (file === null && !found) return;
    if (rows.files.length < rows.paths.length) rows.files.length = rows.paths.length; // rows after `at` move with it
    for (const name of COLUMN_NAMES) spliceColumn(rows[name] as IndexColumn, at, file !== null);
    if (file !== null) this.#setRow(at, file);
    this.#cursor = 0;
  }

  /**
   * The rows of `source` under folder `dir` ("" for the root), in order: every row below it, or with
   * `direct`, only the files directly in it (a sub-folder's rows are stepped over by one search each).
   */
  rowsUnder(source: string, dir: string, direct: boolean): number[] {
    this.#sort();
    const { sources, paths } = this.#rows;
    const prefix = dir === '' ? '' : `${dir}/`;
    const out: number[] = [];
    let row = this.#search(source, prefix);
    while (row < paths.length && sources[row] === source && (paths[row] as string).startsWith(prefix)) {
      const path = paths[row] as string;
      const slash = direct ? path.indexOf('/', prefix.length) : -1;
      if (slash < 0) {
        out.push(row++);
        continue;
      }
      // "sub/..." ends before "sub0" ('0' follows '/'): one search past the sub-folder.
      row = this.#search(source, `${path.slice(0, slash)}0`);
    }
    return out;
  }

  /** The row of the file at this source and path, or -1. */
  rowOf(source: string, path: string): number {
    this.#sort();
    const rows = this.#rows;
    // Lookups in path order (the observer's, the join's) mostly ask for the row after the last answer,
    // or, after a path not tracked, for the row the search stopped at: an equality test, no search.
    const at = this.#cursor;
    if (rows.paths[at] === path && rows.sources[at] === source) return at;
    if (rows.paths[at + 1] === path && rows.sources[at + 1] === source) {
      this.#cursor = at + 1;
      return at + 1;
    }
    const found = this.#search(source, path);
    return found < rows.paths.length && rows.paths[found] === path && rows.sources[found] === source ? found : -1;
  }

  /** The tracked file at this source and path. */
  find(source: string, path: string): TrackedFile | undefined {
    const row = this.rowOf(source, path);
    return row < 0 ? undefined : this.fileAt(row);
  }

  /**
   * The sha256 last recorded for this source and path if the file still has the fingerprint it had
   * then (any fingerprint when `stat` is null: its content is known not to have changed); else null.
   */
  knownSha256(source: string, path: string, stat: Fingerprint | null): string | null {
    const row = this.rowOf(source, path);
    return row >= 0 && (stat === null || this.sameStat(row, stat)) ? this.#rows.sha256.at(row) : null;
  }

  /**
   * knownSha256 of an observed file, which also takes the row's own string for its path: an equal
   * value, already in memory. The walk's own (a joined path, which the comparison flattened into a
   * second copy) is then garbage at once, instead of living on through the plan (which the GC copied).
   * `anyStat`: as knownSha256 with `stat` null (the content is known not to have changed).
   */
  knownSha256Of(file: Fingerprint & { source: string; path: string }, anyStat: boolean): string | null {
    const row = this.rowOf(file.source, file.path);
    if (row < 0) return null;
    const rows = this.#rows;
    file.path = rows.paths[row] as string;
    if (!anyStat && !this.sameStat(row, file)) return null;
    return rows.sha256.at(row);
  }

  /** True when the row's size, mtime and inode are `stat`'s (sameFingerprint, on the columns). */
  sameStat(row: number, stat: Fingerprint): boolean {
    const rows = this.#sorted();
    return rows.sizes[row] === stat.size && rows.inodes[row] === stat.inode && sameMtime(rows.mtimeNs, row, stat.mtimeNs);
  }

  /**
   * True when the row has this fingerprint, is not marked deleted, and has a remote copy that is there
   * and not failed: its file, if it has this fingerprint, is one a delta plan only counts
   * (planner/delta.ts). A deleted row's file found again is planned, so its return is recorded.
   */
  settledAt(row: number, stat: Fingerprint): boolean {
    const rows = this.#sorted();
    return rows.deleted[row] !== 1 && this.sameStat(row, stat) && rows.remoteIds[row] != null && rows.remoteStatuses[row] !== 'failed';
  }

  /** True when the row's last action is 'deleted' (read from a core column: no details decoded). */
  deletedAt(row: number): boolean {
    return this.#sorted().deleted[row] === 1;
  }

  /** The rows whose sha256 is one of `wanted`, in (source, path) order (see Sha256Column.rowsHolding). */
  rowsWithSha256(wanted: ReadonlySet<string>): number[] {
    return rowsHoldingSha256(this.#sorted().sha256, wanted);
  }

  /** True when some row has a remote copy whose status is one of `statuses` (one pass over two columns). */
  hasRemoteStatus(statuses: ReadonlySet<RemoteStatus>): boolean {
    const { remoteIds, remoteStatuses } = this.#sorted();
    for (let row = 0; row < remoteIds.length; row++)
      if (remoteIds[row] !== null && statuses.has(remoteStatuses[row] as RemoteStatus)) return true;
    return false;
  }

  /**
   * The rows with a remote copy that `statuses` (by remote id, a listing's) gives another status, or
   * says failed (the service's reason may be new): the rows a listing's statuses change in the state.
   */
  rowsWithOtherStatus(statuses: ReadonlyMap<string, RemoteStatus>): number[] {
    const { remoteIds, remoteStatuses } = this.#sorted();
    const rows: number[] = [];
    for (let row = 0; row < remoteIds.length; row++) {
      const id = remoteIds[row];
      if (id === null || id === undefined) continue;
      const status = statuses.get(id);
      if (status !== undefined && (status !== remoteStatuses[row] || status === 'failed')) rows.push(row);
    }
    return rows;
  }

  sourceAt(row: number): string {
    return this.#sorted().sources[row] as string;
  }
  pathAt(row: number): string {
    return this.#sorted().paths[row] as string;
  }
  sizeAt(row: number): number {
    return this.#sorted().sizes[row] as number;
  }
  sha256At(row: number): string {
    return this.#sorted().sha256.at(row);
  }
  remoteIdAt(row: number): string | null {
    return this.#sorted().remoteIds[row] as string | null;
  }
  remoteStatusAt(row: number): RemoteStatus | null {
    return this.#sorted().remoteStatuses[row] as RemoteStatus | null;
  }
  remoteNameAt(row: number): string {
    return this.#sorted().remoteNames[row] as string;
  }

  /** The row as a TrackedFile: the same object each time. */
  fileAt(row: number): TrackedFile {
    const rows = this.#sorted();
    const made = rows.files[row];
    if (made !== undefined) return made;
    if (row < 0 || row >= rows.paths.length) throw new RangeError(`no tracked row ${row} (${rows.paths.length} rows)`);
    this.#details.ofRow(this.#rows, row);
    const file = this.#made(rows, row);
    rows.files[row] = file;
    return file;
  }

  /**
   * Every row as a TrackedFile made for this one pass and not kept by the index (one already made is
   * given as it is): a report over a large state holds no object per file.
   */
  *passingFiles(): Generator<TrackedFile> {
    this.#details.decodeAll(this.#rows);
    const rows = this.#sorted();
    const n = rows.paths.length;
    for (let row = 0; row < n; row++) yield rows.files[row] ?? this.#made(rows, row);
  }

  #made(rows: Rows, row: number): TrackedFile {
    return fileOfRow(rows, row, this.remoteErrorOf);
  }

  get size(): number {
    return this.#sorted().paths.length;
  }

  get(key: string): TrackedFile | undefined {
    const at = key.indexOf('\0');
    return at < 0 ? undefined : this.find(key.slice(0, at), key.slice(at + 1));
  }

  has(key: string): boolean {
    const at = key.indexOf('\0');
    return at >= 0 && this.rowOf(key.slice(0, at), key.slice(at + 1)) >= 0;
  }

  *values(): MapIterator<TrackedFile> {
    const n = this.size;
    for (let row = 0; row < n; row++) yield this.fileAt(row);
  }

  *keys(): MapIterator<string> {
    const rows = this.#sorted();
    const n = rows.paths.length;
    for (let row = 0; row < n; row++) yield trackedKey(rows.sources[row] as string, rows.paths[row] as string);
  }

  *entries(): MapIterator<[string, TrackedFile]> {
    for (const file of this.values()) yield [trackedKey(file.source, file.path), file];
  }

  [Symbol.iterator](): MapIterator<[string, TrackedFile]> {
    return this.entries();
  }

  forEach(callback: (value: TrackedFile, key: string, map: ReadonlyMap<string, TrackedFile>) => void, thisArg?: unknown): void {
    for (const [key, file] of this.entries()) callback.call(thisArg, file, key, this);
  }

  #setRow(row: number, f: TrackedFile): void {
    const rows = this.#rows;
    rows.sources[row] = f.source;
    rows.paths[row] = f.path;
    rows.sizes[row] = f.size;
    rows.mtimeNs.set(row, f.mtimeNs);
    rows.inodes[row] = f.inode;
    rows.sha256.set(row, f.sha256);
    rows.remoteNames[row] = f.remoteName;
    rows.remoteIds[row] = f.remoteId;
    rows.remoteStatuses[row] = f.remoteStatus;
    rows.deleted[row] = f.lastAction === 'deleted' ? 1 : 0;
    for (const d of DETAIL_FIELDS) rows[d.index][row] = f[d.prop] ?? null;
    rows.files[row] = f;
  }

  #sorted(): Rows {
    this.#sort();
    return this.#rows;
  }

  /** Makes the rows strictly increasing if they came out of order (see sortedRows). */
  #sort(): void {
    if (this.#ordered) return;
    this.#details.decodeAll(this.#rows);
    this.#rows = sortedRows(this.#rows);
    this.#ordered = true;
    this.#cursor = 0;
  }

  /** The first row not before (source, path), searched from the last answer (see lowerBoundFrom). */
  #search(source: string, path: string): number {
    const { sources, paths } = this.#rows;
    const n = paths.length;
    const lo = lowerBoundFrom(n, this.#cursor, (row) => keyBefore(sources[row] as string, paths[row] as string, source, path));
    this.#cursor = Math.min(lo, Math.max(0, n - 1));
    return lo;
  }
}
