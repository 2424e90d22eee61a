import type { RemoteStatus } from '../types.js';
import type { DetailColumn } from './fields.js';
import { joinedColumn, type IndexColumn, type PackedColumn } from './packed-column.js';

/** The tracked files as columns (what the state reads, TrackedIndex holds) and the stat fingerprint the walk compares. */

/**
 * The columns no plan of unchanged files reads (the `detail` fields of fields.ts, by their `index`
 * name): decoded when the first TrackedFile is made. Each holds the row form as the store read it
 * (updated_at in epoch milliseconds, made ISO when the row's TrackedFile is made: a plan with 1,000
 * changed files makes 1,000 of them, not 100k) or the TrackedFile value put in the index.
 */
export type TrackedDetails = Record<DetailColumn, unknown[]>;

/** One row's details, as `TrackedColumns.detailsOf` reads them: in DETAIL_FIELDS' order. */
export type RowDetails = readonly unknown[];

/**
 * One source's tracked files as columns, aligned by row, in path order (as the state reads them):
 * each TrackedFile field but `source` and the optional `remoteError`, one array per field. The
 * details may come as a function that decodes them, called at most once, when first needed; and
 * `detailsOf` may read one row's (by its index in these columns): the first few TrackedFiles made
 * (a plan with a few changed files) then cost a lookup each, not the decoding of every row.
 */
export type TrackedColumns = {
  paths: string[];
  sizes: number[];
  /** mtime-column.ts */
  mtimeNs: PackedColumn;
  inodes: number[];
  /** sha256-column.ts */
  sha256: PackedColumn;
  remoteNames: string[];
  remoteIds: (string | null)[];
  remoteStatuses: (RemoteStatus | null)[];
  /**
   * 1 where the row's last action is 'deleted' (the file gone from its source), else 0: a core column, so
   * that the unchanged check (TrackedIndex.settledAt) never counts a deleted row without decoding details.
   */
  deleted: number[];
  details: TrackedDetails | (() => TrackedDetails);
  detailsOf?: (index: number) => RowDetails;
};

/** The columns but the details: what a store's bulk read gives, in parts. */
export type CoreColumns = Omit<TrackedColumns, 'details' | 'detailsOf'>;

/** One source's columns of the parts read one after another (a store's chunks, in path order). */
export function joinedColumns(parts: readonly CoreColumns[]): CoreColumns {
  if (parts.length === 1) return parts[0] as CoreColumns;
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(parts[0] ?? {}) as (keyof CoreColumns)[])
    out[name] = joinedColumn(parts.map((p) => p[name] as IndexColumn));
  return out as CoreColumns;
}

/** A file's stat fingerprint. */
export type Fingerprint = { size: number; mtimeNs: string; inode: number };

/** True when two fingerprints are the same: the content is taken as unchanged without hashing. */
export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.inode === b.inode;
}
