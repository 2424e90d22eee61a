import type { RemoteStatus, TrackedFile } from '../types.js';
import { decodeRemoteName, encodeRemoteName, isoOf, mtimeToBind, shaToBlob, toRemoteStatus } from './codec.js';

/** A tracked file to write; `updatedAt` is stamped by the store. */
export type TrackedFileInput = Omit<TrackedFile, 'updatedAt'>;

/** A remote copy as the service lists it (by its remote id): what the `listed` fields are read from. */
export type ListedCopy = { id: string; status: string; error: string | null; chunkCount: number | null };

/** The stores the `files` table lives in. */
export type Store = 'sqlite' | 'pg';

/**
 * Where a field is read: `core`, a column of TrackedIndex read with the index; `detail`, a column of
 * TrackedIndex read when its first TrackedFile is made; `row`, only when a row is read (getTracked and
 * the like), not held by the index.
 */
export type FieldKind = 'key' | 'core' | 'detail' | 'row';

/** The TrackedIndex columns of the `detail` fields (one array each; `index` of the field). */
export type DetailColumn = 'reprocessAttempts' | 'lastActions' | 'lastReasons' | 'updatedAt' | 'remoteChunks';

/** One column of `files` (after source_id), the same name in SQLite and PostgreSQL. */
type Field<C extends string, V> = {
  column: C;
  kind: FieldKind;
  /** A `detail` field's column in TrackedIndex, which holds its row form (or the TrackedFile value put there). */
  index?: DetailColumn;
  /** Its PostgreSQL type (of the unnest() arrays that write it). */
  pg: string;
  /** How a row read gives it, when not as stored: mtime as text, the hash as hex (the row form). */
  read?: Record<Store, string>;
  /** The row form as the driver binds it (the hash as a BLOB, mtime as a bigint): a snapshot's rows are written so. */
  bind?: (value: V, mtime: (ns: bigint) => unknown) => unknown;
  /** The TrackedFile field it holds. */
  prop: keyof TrackedFile;
  /** The TrackedFile value of a row's value (default: the value); `optional`: left out when null. */
  decode?: (value: V, source: string, path: string) => unknown;
  optional?: true;
  /**
   * Written by a file's upsert: its value for the file (default: the TrackedFile field). Else the
   * store keeps it through an upsert (`kept`, given the stores' null-safe equality), set by status updates.
   */
  encode?: (f: TrackedFileInput, at: number, mtime: (ns: bigint) => unknown) => unknown;
  kept?: (same: (a: string, b: string) => string) => string;
  /**
   * Written from the service's listing to every row holding the copy (recordListing): `key`, the
   * listing's field; `value`, what is written (default: that field); `keepNull`, a null leaves the
   * value known.
   */
  listed?: { key: keyof ListedCopy; value?: (c: ListedCopy) => unknown; keepNull?: true };
  /** Phantom: the row form's type. */
  value?: V;
};

const field = <V, C extends string = string>(f: Field<C, V>): Field<C, V> => f;

const remoteCopyKept =
  (column: string, when = '') =>
  (same: (a: string, b: string) => string): string =>
    `CASE WHEN ${when}${same('excluded.remote_id', 'files.remote_id')} THEN files.${column} END`;

/**
 * Every field of a tracked file, once: its column in both stores, where it is read, and how it is
 * encoded and decoded. The row selects, the row → TrackedFile mapping, the upserts and the snapshot
 * transfer (`kbsync state migrate`), the listing's update (recordListing) and TrackedIndex's detail
 * columns (their bulk read, a row's lookup, their decoding) are made from it. The core columns'
 * bulk load is joined by hand for speed (state/sqlite/tracked.ts, state/pg/tracked.ts,
 * state/pg/load.ts, rows.ts).
 */
export const FILE_FIELDS = [
  field<string, 'path'>({ column: 'path', kind: 'key', pg: 'text', prop: 'path' }),
  field<number, 'size'>({ column: 'size', kind: 'core', pg: 'bigint', prop: 'size' }),
  field<string, 'mtime_ns'>({
    column: 'mtime_ns',
    kind: 'core',
    pg: 'bigint',
    prop: 'mtimeNs',
    read: { sqlite: 'CAST(mtime_ns AS TEXT)', pg: 'mtime_ns::text' },
    bind: (v, mtime) => mtime(mtimeToBind(v)),
    encode: (f, _at, mtime) => mtime(mtimeToBind(f.mtimeNs)),
  }),
  field<number, 'inode'>({ column: 'inode', kind: 'core', pg: 'bigint', prop: 'inode' }),
  field<string, 'sha256'>({
    column: 'sha256',
    kind: 'core',
    pg: 'bytea',
    prop: 'sha256',
    read: { sqlite: 'lower(hex(sha256))', pg: "encode(sha256, 'hex')" },
    bind: (v) => shaToBlob(v),
    encode: (f) => shaToBlob(f.sha256),
  }),
  field<string | null, 'remote_name'>({
    column: 'remote_name',
    kind: 'core',
    pg: 'text',
    prop: 'remoteName',
    decode: (v, source, path) => decodeRemoteName(source, path, v),
    encode: (f) => encodeRemoteName(f.source, f.path, f.remoteName),
  }),
  field<string | null, 'remote_id'>({ column: 'remote_id', kind: 'core', pg: 'text', prop: 'remoteId' }),
  field<string | null, 'remote_status'>({
    column: 'remote_status',
    kind: 'core',
    pg: 'text',
    prop: 'remoteStatus',
    listed: { key: 'status', value: (c) => toRemoteStatus(c.status) },
  }),
  field<number, 'reprocess_attempts'>({
    column: 'reprocess_attempts',
    kind: 'detail',
    index: 'reprocessAttempts',
    pg: 'int',
    prop: 'reprocessAttempts',
  }),
  field<string | null, 'last_action'>({ column: 'last_action', kind: 'detail', index: 'lastActions', pg: 'text', prop: 'lastAction' }),
  field<string | null, 'last_reason'>({ column: 'last_reason', kind: 'detail', index: 'lastReasons', pg: 'text', prop: 'lastReason' }),
  field<number, 'updated_at'>({
    column: 'updated_at',
    kind: 'detail',
    index: 'updatedAt',
    pg: 'bigint',
    prop: 'updatedAt',
    // Epoch milliseconds as stored; the index may hold the ISO string a TrackedFile put there.
    decode: (v) => (typeof v === 'number' ? isoOf(v) : v),
    encode: (_f, at) => at,
  }),
  // The service's reason for a failed copy: kept while the copy is the same and still failed.
  field<string | null, 'remote_error'>({
    column: 'remote_error',
    kind: 'row',
    pg: 'text',
    prop: 'remoteError',
    optional: true,
    kept: remoteCopyKept('remote_error', "excluded.remote_status = 'failed' AND "),
    listed: { key: 'error', value: (c) => (toRemoteStatus(c.status) === 'failed' ? c.error : null) },
  }),
  // How many chunks the service listed for the remote copy: kept while the copy is the same.
  field<number | null, 'remote_chunks'>({
    column: 'remote_chunks',
    kind: 'detail',
    index: 'remoteChunks',
    pg: 'int',
    prop: 'remoteChunks',
    optional: true,
    kept: remoteCopyKept('remote_chunks'),
    listed: { key: 'chunkCount', keepNull: true },
  }),
] as const;

type Fields = (typeof FILE_FIELDS)[number];

/** A `files` row but its source, as read (the row form: mtime as text, the hash as hex). */
export type FileRow = { [F in Fields as F['column']]: F extends Field<string, infer V> ? V : never };

const isWritten = (f: Fields): boolean => f.kept === undefined;

/** A `detail` field as TrackedIndex reads it. */
export type DetailField = {
  column: string;
  index: DetailColumn;
  prop: keyof TrackedFile;
  decode?: (value: never, source: string, path: string) => unknown;
  optional?: true;
};

/**
 * The `detail` fields, in the order the stores read them (detailsSelect, a row's details): columns of
 * TrackedIndex read when its first TrackedFile is made.
 */
export const DETAIL_FIELDS: readonly DetailField[] = FILE_FIELDS.flatMap((f) =>
  f.kind === 'detail' && f.index !== undefined ? [f as DetailField] : [],
);

/** The detail columns' select list (as stored: the index decodes them). */
export const DETAIL_SELECT = DETAIL_FIELDS.map((d) => d.column).join(', ');

/** The columns a file's upsert writes, source_id first, in fileValues()'s order. */
export const UPSERT_COLUMNS: readonly string[] = ['source_id', ...FILE_FIELDS.filter(isWritten).map((f) => f.column)];

/** The row form's select list of `files` (each column as FileRow has it), for `store`. */
export function fileSelect(store: Store): string {
  return FILE_FIELDS.map((f) => (f.read === undefined ? f.column : `${f.read[store]} AS ${f.column}`)).join(', ');
}

/** The SET list of a file's upsert on conflict: written columns replaced, kept ones kept; `same` is the store's null-safe equality. */
export function upsertSet(same: (a: string, b: string) => string): string {
  return FILE_FIELDS.filter((f) => f.column !== 'path')
    .map((f) => `${f.column} = ${f.kept === undefined ? `excluded.${f.column}` : f.kept(same)}`)
    .join(', ');
}

/** The values a file's upsert binds for UPSERT_COLUMNS; `mtime` gives the form the driver binds a nanosecond mtime in. */
export function fileValues(f: TrackedFileInput, sourceId: number, at: number, mtime: (ns: bigint) => unknown): unknown[] {
  const values: unknown[] = [sourceId];
  for (const d of FILE_FIELDS) {
    if (d.kept !== undefined) continue;
    values.push(d.encode === undefined ? (f as Partial<TrackedFile>)[d.prop] : d.encode(f, at, mtime));
  }
  return values;
}

/** A `files` row as a TrackedFile, given its source's name. */
export function trackedOfRow(r: FileRow, source: string): TrackedFile {
  const out: Record<string, unknown> = { source };
  for (const d of FILE_FIELDS) {
    const value = r[d.column] as never;
    if (d.optional === true && value === null) continue;
    out[d.prop] = d.decode === undefined ? value : d.decode(value, source, r.path);
  }
  return out as TrackedFile;
}

/** Every column of `files` (after source_id), in FILE_FIELDS' order: what a snapshot writes. */
export const ALL_COLUMNS: readonly string[] = FILE_FIELDS.map((f) => f.column);

/** A row form's values for ALL_COLUMNS as the driver binds them; `mtime` as in fileValues(). */
export function rowValues(r: FileRow, mtime: (ns: bigint) => unknown): unknown[] {
  return FILE_FIELDS.map((d) => (d.bind === undefined ? r[d.column] : d.bind(r[d.column] as never, mtime)));
}

/** The PostgreSQL types of ALL_COLUMNS, in order (as an unnest() of them casts its arrays). */
export const PG_TYPES: readonly string[] = FILE_FIELDS.map((f) => f.pg);

const LISTED = FILE_FIELDS.flatMap((f) => ('listed' in f && f.listed !== undefined ? [{ column: f.column, pg: f.pg, ...f.listed }] : []));

/** The columns the service's listing writes (recordListing), in listedValues()'s order. */
export const LISTED_COLUMNS: readonly string[] = LISTED.map((f) => f.column);

/** Their PostgreSQL types, in order. */
export const LISTED_PG_TYPES: readonly string[] = LISTED.map((f) => f.pg);

/** The values a listed copy writes to LISTED_COLUMNS. */
export function listedValues(c: ListedCopy): unknown[] {
  return LISTED.map((f) => (f.value === undefined ? c[f.key] : f.value(c)) ?? null);
}

/**
 * The update a listing makes, given the table `u` of (remote_id, LISTED_COLUMNS...): the SET list
 * (updated_at too) and the condition that some listed column changes; `distinct` is the store's
 * null-safe inequality, `at` the updated_at parameter.
 */
export function listedUpdate(distinct: (a: string, b: string) => string, at: string): { set: string; changed: string } {
  const value = (f: (typeof LISTED)[number]): string =>
    f.keepNull === true ? `coalesce(u.${f.column}, files.${f.column})` : `u.${f.column}`;
  return {
    set: [...LISTED.map((f) => `${f.column} = ${value(f)}`), `updated_at = ${at}`].join(', '),
    changed: `(${LISTED.map((f) => distinct(`files.${f.column}`, value(f))).join(' OR ')})`,
  };
}

/** The status of each listed copy, by remote id. */
export function listedStatuses(copies: readonly ListedCopy[]): Map<string, RemoteStatus> {
  return new Map(copies.map((c) => [c.id, toRemoteStatus(c.status)]));
}
