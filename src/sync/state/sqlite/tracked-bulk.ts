import type { Database } from 'better-sqlite3';
import { errorText } from '../../../shared/errors.js';
import { decodeRemoteName } from '../../tracked/codec.js';
import { DETAIL_FIELDS, DETAIL_SELECT } from '../../tracked/fields.js';
import { joinedColumns, type CoreColumns, type TrackedDetails } from '../../tracked/columns.js';
import { TrackedIndex } from '../../tracked/tracked-index.js';
import { sha256ColumnOfHex } from '../../tracked/sha256-column.js';
import { mtimeColumnOfText } from '../../tracked/mtime-column.js';
import type { SourceIds } from './sources.js';

/**
 * A chunk of one source's files as one row of columns built by SQLite: reading the rows one by one costs
 * better-sqlite3 an array and a string per column of each row; as columns, far less. Every
 * aggregate sees the rows in the same order, so the columns stay aligned; the hashes come as one
 * hex string, 64 characters a file.
 *
 * Text columns come joined by a separator and are split (SEPARATED), not parsed as JSON: JSON.parse
 * of paths and remote ids ("1", "2"...: V8 internalizes every short string it parses) took several
 * times what split does. A value holding its separator (a NUL in a path rebuilt from a
 * name the service sent, a NUL in a remote id the service chose) makes its column split into too many
 * values, and that column is then read again as JSON, with the paths and hashes beside it to check
 * that the rows did not change in between. group_concat leaves out nulls: the remote ids' nulls come
 * as a string of flags, "1" per null.
 */
const BULK_COLUMNS = `count(*), group_concat(path, char(0)), json_group_array(size), group_concat(mtime_ns, ','),
  json_group_array(inode), group_concat(hex(sha256), ''), json_group_array(remote_name), group_concat(ifnull(remote_id, ''), char(0)),
  json_group_array(remote_status), group_concat(remote_id IS NULL, ''), group_concat(last_action IS 'deleted', '')`;

/** The columns BULK_COLUMNS splits, with the JSON expression that reads one again (a value held the separator). */
const SEPARATED = {
  path: { separator: '\0', json: 'json_group_array(path)' },
  remote_id: { separator: '\0', json: 'json_group_array(remote_id)' },
} as const;
type SeparatedColumn = keyof typeof SEPARATED;

/**
 * The details (attempts, last action and reason, time) of one source's files, the same way: read
 * only when the first TrackedFile is made. A plan of unchanged files never reads them, and each
 * column costs SQLite time to build.
 */
export const DETAILS_SQL = `SELECT count(*), ${DETAIL_FIELDS.map((d) => `json_group_array(${d.column})`).join(', ')} FROM files WHERE source_id = ?`;

/** The files a BULK_SQL row holds at most: the text SQLite builds for it, and its copy here, stay some megabytes. */
export const BULK_CHUNK_FILES = 65_536;

/** The columns BULK_COLUMNS reads, of the files in one chunk. */
const CHUNK_COLUMNS = 'path, size, mtime_ns, inode, sha256, remote_name, remote_id, remote_status, last_action';
const chunkOf = (after: boolean): string =>
  `SELECT ${CHUNK_COLUMNS} FROM files WHERE source_id = ?${after ? ' AND path > ?' : ''} ORDER BY path LIMIT ${BULK_CHUNK_FILES}`;

/**
 * Up to BULK_CHUNK_FILES of one source's files in one row (see BULK_COLUMNS), then the last path:
 * the first chunk, and the chunk after a path. The search of the primary key (source_id, path) of
 * this WITHOUT ROWID table yields them in path order, with no sort.
 */
export const BULK_SQL = {
  first: `SELECT ${BULK_COLUMNS}, max(path) FROM (${chunkOf(false)})`,
  after: `SELECT ${BULK_COLUMNS}, max(path) FROM (${chunkOf(true)})`,
};

/**
 * Every chunk of a source (see BULK_SQL), read by `read(after)` until one comes short, each given to
 * `use` with the path it starts after, and dropped before the next is read.
 */
export function eachBulkChunk(read: (after: string | null) => BulkRow, use: (chunk: BulkRow, after: string | null) => void): void {
  let after: string | null = null;
  for (;;) {
    const chunk = read(after);
    use(chunk, after);
    if (chunk[0] < BULK_CHUNK_FILES) return;
    after = chunk[chunk.length - 1] as string;
  }
}
/** Every source's chunks (BULK_SQL rows) by source id, in one snapshot: what the tracked-files worker reads. */
export function readBulk(db: Database): [number, BulkRow[]][] {
  const first = db.prepare(BULK_SQL.first).raw(true);
  const after = db.prepare(BULK_SQL.after).raw(true);
  const ids = (db.prepare(SOURCES_SQL).raw(true).all() as [number, string][]).map(([id]) => id);
  return db.transaction(() =>
    ids.map((id): [number, BulkRow[]] => {
      const chunks: BulkRow[] = [];
      eachBulkChunk(
        (from) => (from === null ? first.get(id) : after.get(id, from)) as BulkRow,
        (chunk) => chunks.push(chunk),
      );
      return [id, chunks];
    }),
  )();
}

/** The sources, by id. */
export const SOURCES_SQL = 'SELECT id, name FROM sources';

/** A BULK_SQL row: the count, then each column as text (see BULK_COLUMNS), then the last path. */
export type BulkRow = [number, ...(string | null)[]];
/** A column read again as JSON: the count, the column, and the paths (JSON) and hashes (hex) of the same read. */
type ColumnAgain = [number, string | null, string | null, string | null];
/** A DETAILS_SQL row: the count, then each column as JSON (DETAIL_FIELDS' order). */
type DetailsRow = [number, ...(string | null)[]];

/** The bulk read of every tracked file into a TrackedIndex (part of createTrackedFiles). */
export function createTrackedLoad(db: Database, sources: SourceIds) {
  const sourceRows = db.prepare(SOURCES_SQL).raw(true);
  // The primary key (source_id, path) delivers each source's rows in path order without a sort.
  const firstChunk = db.prepare(BULK_SQL.first).raw(true);
  const chunkAfter = db.prepare(BULK_SQL.after).raw(true);
  const readChunk = (id: number, after: string | null): BulkRow =>
    (after === null ? firstChunk.get(id) : chunkAfter.get(id, after)) as BulkRow;
  const detailsOfSource = db.prepare(DETAILS_SQL).raw(true);
  // The same chunk again, its column as JSON.
  const columnAsJson = (column: SeparatedColumn, sourceId: number, after: string | null): ColumnAgain =>
    db
      .prepare(
        `SELECT count(*), ${SEPARATED[column].json}, json_group_array(path), group_concat(hex(sha256), '') FROM (${chunkOf(after !== null)})`,
      )
      .raw(true)
      .get(...(after === null ? [sourceId] : [sourceId, after])) as ColumnAgain;
  const detailsOfFile = db.prepare(`SELECT ${DETAIL_SELECT} FROM files WHERE source_id = ? AND path = ?`).raw(true);
  const remoteErrorOf = db
    .prepare<[number, string], string | null>(
      `SELECT remote_error FROM files WHERE source_id = ? AND path = ? AND remote_status = 'failed'`,
    )
    .pluck();
  const keyArgs = (source: string, path: string): [number, string] | null => {
    const id = sources.findId(source);
    return id === undefined ? null : [id, path];
  };

  return {
    /**
     * Every tracked file, in (source, path) order as the planner's join wants them (sources by
     * name, paths in SQLite's byte order, which is JavaScript's except around U+E000–U+FFFF).
     * `bulk`: the BULK_SQL rows of some sources, already read (by a worker thread, see load.ts).
     */
    loadTrackedFiles(bulk?: ReadonlyMap<number, BulkRow[]>): TrackedIndex {
      const index = new TrackedIndex();
      const named = (sourceRows.all() as [number, string][]).sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      // Chunk by chunk, each parsed before the next is read, in one snapshot (a savepoint inside a
      // transaction already open); the worker's chunks as they came.
      const readAll = db.transaction(() =>
        named.map(([id, source]) => {
          const parts: CoreColumns[] = [];
          const given = bulk?.get(id);
          eachBulkChunk(
            (after) => given?.[parts.length] ?? readChunk(id, after),
            (chunk, after) => parts.push(readColumns(source, chunk, (column) => columnAsJson(column, id, after))),
          );
          return joinedColumns(parts);
        }),
      );
      const columns = readAll();
      for (const [k, [id, source]] of named.entries()) {
        const read = columns[k] as CoreColumns;
        index.addColumns(source, {
          ...read,
          details: () => detailsOfChunks(source, read.paths.length, detailsOfSource.get(id) as DetailsRow),
          detailsOf: (i) => {
            const r = detailsOfFile.get(id, read.paths[i]) as unknown[] | undefined;
            if (r === undefined)
              throw new Error(`tracked files of source "${source}": changed while they were read (${read.paths[i]} is gone): plan again`);
            return r;
          },
        });
      }
      // Read per failed row when its TrackedFile is made: few rows fail, and the bulk read stays as it is.
      index.remoteErrorOf = (source, path) => {
        const args = keyArgs(source, path);
        return args === null ? null : (remoteErrorOf.get(...args) ?? null);
      };
      return index;
    },
  };
}

/**
 * The columns of a BULK_COLUMNS row, parsed and decoded (remote names, hashes). The details (attempts,
 * last action and reason, times), which a plan of unchanged files never reads, are read (DETAILS_SQL,
 * through `readDetails`) and parsed when the first TrackedFile is made (saved when none is); a damaged details column is then found, and reported with its source and column.
 * The state must not change in between (a sync reads them before it writes: TrackedIndex.loadDetails):
 * rows that changed in number are refused. Throws if a column does not hold one value per file (the
 * database is damaged).
 */
function readColumns(source: string, row: BulkRow, readAsJson: (column: SeparatedColumn) => ColumnAgain): CoreColumns {
  const [count, paths, sizes, mtimes, inodes, shas, names, ids, statuses, nullIds, deletedFlags] = row;
  const parse = <T>(column: string, json: string | null | undefined): T[] => parsedColumn(source, column, json, count);
  const hex = shas ?? '';
  const changed = (why: string): Error =>
    new Error(`tracked files of source "${source}": changed while they were read (${why}): plan again`);
  // Read again (possibly on another connection than the bulk row's): the same rows, or a refusal.
  const split = (column: SeparatedColumn, joined: string | null | undefined, pathsSoFar: readonly string[] | null): string[] => {
    const values = count === 0 ? [] : (joined ?? '').split(SEPARATED[column].separator);
    if (values.length === count) return values;
    const [files, json, pathsJson, shasAgain] = readAsJson(column);
    if (files !== count) throw changed(`${count} at first, ${files} later`);
    if ((shasAgain ?? '') !== hex) throw changed('their hashes moved');
    const again = parse<string>(column, json);
    const paths = column === 'path' ? again : parse<string>('path', pathsJson);
    if (pathsSoFar !== null && paths.some((p, i) => p !== pathsSoFar[i])) throw changed('their paths moved');
    return again;
  };
  const sha256 = sha256ColumnOfHex(hex, count, `tracked files of source "${source}"`);
  const nulls = nullIds ?? '';
  if (nulls.length !== count)
    throw new Error(`tracked files of source "${source}": remote_id holds ${nulls.length} null flags for ${count} files`);
  const flags = deletedFlags ?? '';
  if (flags.length !== count)
    throw new Error(`tracked files of source "${source}": last_action holds ${flags.length} deleted flags for ${count} files`);
  const pathColumn = split('path', paths, null);
  const deleted = new Array<number>(count);
  const remoteIds: (string | null)[] = split('remote_id', ids, pathColumn);
  // Stored names are null when the name is the path (see encodeRemoteName): decoded here, once.
  const remoteNames = parse<string | null>('remote_name', names) as string[];
  for (let i = 0; i < count; i++) {
    const name = remoteNames[i] as string | null;
    remoteNames[i] = name === null ? (pathColumn[i] as string) : decodeRemoteName(source, pathColumn[i] as string, name);
    if (nulls.charCodeAt(i) === 49 /* "1" */) remoteIds[i] = null;
    deleted[i] = flags.charCodeAt(i) === 49 ? 1 : 0;
  }
  return {
    paths: pathColumn,
    sizes: parse('size', sizes),
    mtimeNs: mtimeColumnOfText(mtimes ?? '', count, ',', `tracked files of source "${source}"`),
    inodes: parse('inode', inodes),
    sha256,
    remoteNames,
    remoteIds,
    remoteStatuses: parse('remote_status', statuses),
    deleted,
  };
}

/** A column read as JSON, refused (naming the source and column) unless it holds `count` values. */
function parsedColumn<T>(source: string, column: string, json: string | null | undefined, count: number): T[] {
  let values: T[];
  try {
    values = JSON.parse(json ?? '[]') as T[];
  } catch (err) {
    throw new Error(`tracked files of source "${source}": ${column} is not readable (${errorText(err)})`, { cause: err });
  }
  if (values.length !== count)
    throw new Error(`tracked files of source "${source}": ${column} holds ${values.length} values for ${count} files`);
  return values;
}

/** The detail columns of a DETAILS_SQL row of a source whose core columns hold `count` files; refused when the count changed since. */
function detailsOfChunks(source: string, count: number, row: DetailsRow): TrackedDetails {
  const [files, ...columns] = row;
  if (files !== count)
    throw new Error(`tracked files of source "${source}": changed while they were read (${count} at first, ${files} later): plan again`);
  return Object.fromEntries(DETAIL_FIELDS.map((d, i) => [d.index, parsedColumn(source, d.column, columns[i], count)])) as TrackedDetails;
}
