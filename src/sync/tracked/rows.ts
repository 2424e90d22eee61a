import { keyBefore } from './keys.js';
import type { TrackedColumns, TrackedDetails } from './columns.js';
import type { RemoteStatus, TrackedFile } from '../types.js';
import { DETAIL_FIELDS, type DetailColumn, type DetailField } from './fields.js';
import { PackedColumn, pickedColumn, type IndexColumn } from './packed-column.js';
import { SHA256_CODEC } from './sha256-column.js';
import { MTIME_CODEC } from './mtime-column.js';

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
  mtimeNs: new PackedColumn(MTIME_CODEC),
  inodes: [],
  sha256: new PackedColumn(SHA256_CODEC),
  remoteNames: [],
  remoteIds: [],
  remoteStatuses: [],
  deleted: [],
  ...(Object.fromEntries(DETAIL_COLUMNS.map((name) => [name, []])) as unknown as TrackedDetails),
  files: [],
});
export const COLUMN_NAMES = Object.keys(emptyRows()) as (keyof Rows)[];

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
  for (const name of COLUMN_NAMES) (sorted[name] as IndexColumn) = pickedColumn(rows[name] as IndexColumn, kept);
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
    mtimeNs: rows.mtimeNs.at(row),
    inode: rows.inodes[row] as number,
    sha256: rows.sha256.at(row),
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
