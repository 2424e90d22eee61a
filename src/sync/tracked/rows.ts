import { keyBefore } from './keys.js';
import type { TrackedColumns, TrackedDetails } from './columns.js';
import type { RemoteStatus, TrackedFile } from '../types.js';
import { DETAIL_FIELDS, type DetailColumn, type DetailField } from './fields.js';

/** Up to this many wanted hashes, rowsHolding compares strings instead of looking each row up in a set. */
export const FEW_WANTED = 8;

export const CORE_COLUMNS = [
  'paths',
  'sizes',
  'mtimeNs',
  'inodes',
  'sha256',
  'remoteNames',
  'remoteIds',
  'remoteStatuses',
  'deleted',
] as const;
export const DETAIL_COLUMNS: readonly DetailColumn[] = DETAIL_FIELDS.map((d) => d.index);

/** TrackedIndex's rows: one array per column, the row number the index into each. */
export type Rows = Omit<TrackedColumns, 'details'> &
  TrackedDetails & {
    sources: string[];
    /** The row as an object, made on first request (or the object the row was added from). */
    files: (TrackedFile | undefined)[];
  };

export const emptyRows = (): Rows => ({
  sources: [],
  paths: [],
  sizes: [],
  mtimeNs: [],
  inodes: [],
  sha256: [],
  remoteNames: [],
  remoteIds: [],
  remoteStatuses: [],
  deleted: [],
  ...(Object.fromEntries(DETAIL_COLUMNS.map((name) => [name, []])) as unknown as TrackedDetails),
  files: [],
});
export const COLUMN_NAMES = Object.keys(emptyRows()) as (keyof Rows)[];

/**
 * The rows whose value in `column` (sha256s) is one of `wanted`, in row order: one pass over the column.
 * A few hashes (a change seen by `kbsync watch`) are compared as strings, which mostly differ at their
 * first character; a set lookup would first hash each string of the column, on the path from a change
 * to its upload.
 */
export function rowsHolding(column: readonly string[], wanted: ReadonlySet<string>): number[] {
  const rows: number[] = [];
  if (wanted.size === 0) return rows;
  if (wanted.size > FEW_WANTED) {
    for (let row = 0; row < column.length; row++) if (wanted.has(column[row] as string)) rows.push(row);
    return rows;
  }
  const few = [...wanted];
  for (let row = 0; row < column.length; row++) {
    const value = column[row] as string;
    for (let i = 0; i < few.length; i++) {
      if (value === few[i]) {
        rows.push(row);
        break;
      }
    }
  }
  return rows;
}

/** Hex digits of a sha256 in its tag: 28 bits, a small integer (an array of them is packed, not boxed). */
const TAG_DIGITS = 7;

/** The tag of a sha256: its first 7 hex digits as a number; -1 when they are not hex (no tag). */
function sha256Tag(sha256: string): number {
  if (sha256.length < TAG_DIGITS) return -1;
  let tag = 0;
  for (let i = 0; i < TAG_DIGITS; i++) {
    const c = sha256.charCodeAt(i);
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (digit < 0) return -1;
    tag = tag * 16 + digit;
  }
  return tag;
}

/**
 * The tags of a sha256 column (sha256Tag of each row), kept in step with the column by its writer: a
 * kept index's (TrackedIndex.tagSha256s).
 */
export class Sha256Tags {
  readonly #tags: number[];

  constructor(column: readonly string[]) {
    this.#tags = column.map(sha256Tag);
  }

  /** Tags row `row` (or appends it, one past the end); false for a row further on: these tags are then of no use. */
  set(row: number, sha256: string): boolean {
    if (row > this.#tags.length) return false;
    this.#tags[row] = sha256Tag(sha256);
    return true;
  }

  /** A row inserted at `at` (its tag set next). */
  insert(at: number): void {
    this.#tags.splice(at, 0, -1);
  }

  remove(at: number): void {
    this.#tags.splice(at, 1);
  }

  /** rowsTagged over these tags. */
  rowsHolding(column: readonly string[], wanted: ReadonlySet<string>): number[] | null {
    return rowsTagged(this.#tags, column, wanted);
  }
}

/**
 * rowsHolding for a few wanted hashes, over the column's tags (sha256Tag of each row, in a packed
 * array of small integers): a pass over 4 bytes a row, held together, instead of over 100k strings
 * spread across the heap (whose cost is mostly cache misses). A row whose tag matches is
 * compared whole. Null when a wanted hash has no tag (not hex): the caller compares strings.
 */
function rowsTagged(tags: readonly number[], column: readonly string[], wanted: ReadonlySet<string>): number[] | null {
  const few = [...wanted];
  const wantedTags = few.map(sha256Tag);
  if (wantedTags.includes(-1)) return null;
  const rows: number[] = [];
  for (let row = 0; row < tags.length; row++) {
    const tag = tags[row] as number;
    for (let i = 0; i < wantedTags.length; i++) {
      if (tag === wantedTags[i] && column[row] === few[i]) {
        rows.push(row);
        break;
      }
    }
  }
  return rows;
}

/** True when the rows from `from` on are strictly increasing in (source, path). */
export function increasingFrom(rows: Rows, from: number): boolean {
  const { sources, paths } = rows;
  for (let i = from + 1; i < paths.length; i++) {
    if (!keyBefore(sources[i - 1] as string, paths[i - 1] as string, sources[i] as string, paths[i] as string)) return false;
  }
  return true;
}

/** The rows sorted (stably) in (source, path) order and deduplicated, the last added of a key winning. Their details must be decoded. */
export function sortedRows(rows: Rows): Rows {
  const { sources, paths } = rows;
  const order = Array.from(paths.keys()).sort((a, b) => {
    const sa = sources[a] as string;
    const pa = paths[a] as string;
    const sb = sources[b] as string;
    const pb = paths[b] as string;
    return sa === sb && pa === pb ? a - b : keyBefore(sa, pa, sb, pb) ? -1 : 1;
  });
  const sameKey = (a: number, b: number): boolean => sources[a] === sources[b] && paths[a] === paths[b];
  const kept = order.filter((row, k) => k === order.length - 1 || !sameKey(row, order[k + 1] as number));
  const sorted = emptyRows();
  for (const name of COLUMN_NAMES) (sorted[name] as unknown[]) = kept.map((row) => (rows[name] as unknown[])[row]);
  return sorted;
}

/** Throws when a column of a source's block does not hold one value per file. */
export function checkLength(source: string, column: string, length: number, files: number): void {
  if (length !== files) throw new Error(`tracked files of source "${source}": ${column} holds ${length} values for ${files} files`);
}

/** Row `row` as a new TrackedFile: its detail fields decoded, a failed copy's remote error added. */
export function fileOfRow(
  rows: Rows,
  row: number,
  remoteErrorOf: ((source: string, path: string) => string | null) | undefined,
): TrackedFile {
  const file: TrackedFile = {
    source: rows.sources[row] as string,
    path: rows.paths[row] as string,
    size: rows.sizes[row] as number,
    mtimeNs: rows.mtimeNs[row] as string,
    inode: rows.inodes[row] as number,
    sha256: rows.sha256[row] as string,
    remoteName: rows.remoteNames[row] as string,
    remoteId: rows.remoteIds[row] as string | null,
    remoteStatus: rows.remoteStatuses[row] as RemoteStatus | null,
  } as TrackedFile;
  // The detail fields (fields.ts), decoded; an optional one left out when null.
  const out = file as Record<string, unknown>;
  for (let i = 0; i < DETAIL_FIELDS.length; i++) {
    const d = DETAIL_FIELDS[i] as DetailField;
    const value = rows[d.index][row];
    if (d.decode !== undefined) out[d.prop] = d.decode(value as never, file.source, file.path);
    else if (value !== null || d.optional !== true) out[d.prop] = value;
  }
  if (file.remoteStatus === 'failed' && remoteErrorOf !== undefined) {
    const error = remoteErrorOf(file.source, file.path);
    if (error !== null) file.remoteError = error;
  }
  return file;
}
