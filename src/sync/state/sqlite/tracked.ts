import type { Database } from 'better-sqlite3';
import { errorText } from '../../../shared/errors.js';
import type { RemoteStatus, TrackedFile } from '../../types.js';
import { decodeRemoteName, shaToBlob } from '../../tracked/codec.js';
import {
  fileSelect,
  fileValues,
  listedUpdate,
  listedValues,
  trackedOfRow,
  upsertSet,
  LISTED_COLUMNS,
  UPSERT_COLUMNS,
  DETAIL_FIELDS,
  DETAIL_SELECT,
  type FileRow,
  type ListedCopy,
  type TrackedFileInput,
} from '../../tracked/fields.js';
import type { SourceIds } from './sources.js';
import type { TrackedColumns, TrackedDetails } from '../../tracked/columns.js';
import type { UnsettledCopy } from '../state-types.js';
import { TrackedIndex } from '../../tracked/tracked-index.js';
import { Sha256Column } from '../../tracked/sha256-column.js';

export type { TrackedFileInput } from '../../tracked/fields.js';

export { trackedKey } from '../../tracked/keys.js';

export type TrackedFiles = ReturnType<typeof createTrackedFiles>;

// Hex and text conversions happen in SQLite: cheaper than a Buffer and a BigInt per row in JS.
const COLUMNS = `source_id, ${fileSelect('sqlite')}`;
type Row = FileRow & { source_id: number };

/**
 * One source's files as one row of columns built by SQLite: reading the rows one by one costs
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
  mtime_ns: { separator: ',', json: 'json_group_array(CAST(mtime_ns AS TEXT))' },
  remote_id: { separator: '\0', json: 'json_group_array(remote_id)' },
} as const;
type SeparatedColumn = keyof typeof SEPARATED;

/**
 * The details (attempts, last action and reason, time) of one source's files, the same way: read
 * only when the first TrackedFile is made. A plan of unchanged files never reads them, and each
 * column costs SQLite time to build.
 */
export const DETAILS_SQL = `SELECT count(*), ${DETAIL_FIELDS.map((d) => `json_group_array(${d.column})`).join(', ')} FROM files WHERE source_id = ?`;

/**
 * One source's files in one row (see BULK_COLUMNS). The search of the primary key (source_id, path)
 * of this WITHOUT ROWID table yields them in path order; no ORDER BY subquery, which copied every
 * column of every row once more. The order is not relied on: TrackedIndex
 * sorts rows that come out of order.
 */
export const BULK_SQL = `SELECT ${BULK_COLUMNS} FROM files WHERE source_id = ?`;
/** The sources, by id. */
export const SOURCES_SQL = 'SELECT id, name FROM sources';

/** A BULK_SQL row: the count, then each column as text (see BULK_COLUMNS). */
export type BulkRow = [number, ...(string | null)[]];
/** A column read again as JSON: the count, the column, and the paths (JSON) and hashes (hex) of the same read. */
type ColumnAgain = [number, string | null, string | null, string | null];
/** A DETAILS_SQL row: the count, then each column as JSON (DETAIL_FIELDS' order). */
type DetailsRow = [number, ...(string | null)[]];

/** The `files` table: what kbsync last sent (or decided) per source path. */
export function createTrackedFiles(db: Database, sources: SourceIds, nowMs: () => number) {
  const sourceRows = db.prepare(SOURCES_SQL).raw(true);
  // The primary key (source_id, path) delivers each source's rows in path order without a sort.
  const columnsOfSource = db.prepare(BULK_SQL).raw(true);
  const detailsOfSource = db.prepare(DETAILS_SQL).raw(true);
  const columnAsJson = (column: SeparatedColumn, sourceId: number): ColumnAgain =>
    db
      .prepare(
        `SELECT count(*), ${SEPARATED[column].json}, json_group_array(path), group_concat(hex(sha256), '') FROM files WHERE source_id = ?`,
      )
      .raw(true)
      .get(sourceId) as ColumnAgain;
  const detailsOfFile = db.prepare(`SELECT ${DETAIL_SELECT} FROM files WHERE source_id = ? AND path = ?`).raw(true);
  const one = db.prepare(`SELECT ${COLUMNS} FROM files WHERE source_id = ? AND path = ?`);
  const bySha = db.prepare(`SELECT ${COLUMNS} FROM files WHERE sha256 = ?`);
  const INSERT = `INSERT INTO files (${UPSERT_COLUMNS.join(', ')}) VALUES (${UPSERT_COLUMNS.map(() => '?').join(',')})`;
  const upsert = db.prepare(`${INSERT} ON CONFLICT (source_id, path) DO UPDATE SET ${upsertSet((a, b) => `${a} IS ${b}`)}`);
  const insertNew = db.prepare(`${INSERT} ON CONFLICT (source_id, path) DO NOTHING`);
  const remove = db.prepare('DELETE FROM files WHERE source_id = ? AND path = ?');
  const deleted = db.prepare(`UPDATE files SET last_action = 'deleted', last_reason = ?, updated_at = ? WHERE source_id = ? AND path = ?`);
  const statusById = db.prepare('UPDATE files SET remote_status = ?, updated_at = ? WHERE remote_id = ? AND remote_status IS NOT ?');
  // A listing's copies go through a temp table keyed by remote id: one scan of files, no rows copied into JS.
  db.exec(`CREATE TEMP TABLE IF NOT EXISTS listed_copies (remote_id TEXT PRIMARY KEY, ${LISTED_COLUMNS.join(', ')}) WITHOUT ROWID`);
  const stage = db.prepare(
    `INSERT OR REPLACE INTO temp.listed_copies (remote_id, ${LISTED_COLUMNS.join(', ')}) VALUES (?${', ?'.repeat(LISTED_COLUMNS.length)})`,
  );
  const listed = listedUpdate((a, b) => `${a} IS NOT ${b}`, '?');
  const applyStaged = db.prepare<[number]>(
    `UPDATE files SET ${listed.set} FROM temp.listed_copies AS u WHERE files.remote_id = u.remote_id AND ${listed.changed}`,
  );
  const clearStaged = db.prepare('DELETE FROM temp.listed_copies');
  const remoteErrorOf = db
    .prepare<[number, string], string | null>(
      `SELECT remote_error FROM files WHERE source_id = ? AND path = ? AND remote_status = 'failed'`,
    )
    .pluck();
  const count = db.prepare("SELECT count(*) FROM files WHERE last_action IS NOT 'deleted'").pluck();
  const countWith = db.prepare("SELECT count(*) FROM files WHERE last_action IS NOT 'deleted' AND remote_status = ?").pluck();
  const unsettledRows = db
    .prepare(
      `SELECT source_id, path, remote_id, remote_status FROM files
      WHERE remote_id IS NOT NULL AND remote_status IN ('queued','processing','unknown')`,
    )
    .raw(true);
  const unsettled = db
    .prepare(`SELECT 1 FROM files WHERE remote_id IS NOT NULL AND remote_status IN ('queued','processing','unknown') LIMIT 1`)
    .pluck();

  const toTracked = (r: Row): TrackedFile => trackedOfRow(r, sources.nameOf(r.source_id));

  const argsOf = (f: TrackedFileInput, at: number) => fileValues(f, sources.idOf(f.source), at, (ns) => ns);
  const write = (f: TrackedFileInput, at = nowMs()): void => {
    upsert.run(...argsOf(f, at));
  };
  const writeMany = db.transaction((files: readonly TrackedFileInput[]) => {
    const at = nowMs();
    for (const f of files) write(f, at);
  });
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
    loadTrackedFiles(bulk?: ReadonlyMap<number, BulkRow>): TrackedIndex {
      const index = new TrackedIndex();
      const named = (sourceRows.all() as [number, string][]).sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      for (const [id, source] of named) {
        const columns = (bulk?.get(id) ?? columnsOfSource.get(id)) as BulkRow;
        const read = readColumns(
          source,
          columns,
          () => detailsOfSource.get(id) as DetailsRow,
          (column) => columnAsJson(column, id),
        );
        index.addColumns(source, {
          ...read,
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
    ...createTrackedPages(db, sources),
    /** One tracked file, or null. */
    getTracked(source: string, path: string): TrackedFile | null {
      const args = keyArgs(source, path);
      const r = args === null ? undefined : (one.get(...args) as Row | undefined);
      return r === undefined ? null : toTracked(r);
    },
    /** Inserts or replaces one tracked file. */
    upsertTracked(f: TrackedFileInput): void {
      write(f);
    },
    /** Inserts or replaces many tracked files in one transaction. */
    upsertTrackedMany(files: readonly TrackedFileInput[]): void {
      writeMany(files);
    },
    /** Records that the file is gone locally; the row stays (its remote copy remains). False when not tracked. */
    markDeleted(source: string, path: string, reason = 'deleted locally; the remote copy remains'): boolean {
      const args = keyArgs(source, path);
      return args !== null && deleted.run(reason, nowMs(), ...args).changes > 0;
    },
    /** Forgets a tracked file entirely. False when not tracked. */
    removeTracked(source: string, path: string): boolean {
      const args = keyArgs(source, path);
      return args !== null && remove.run(...args).changes > 0;
    },
    /** Tracked files with this content (a scan: prefer a Map built from loadTrackedFiles() in bulk work). */
    findBySha256(sha256: string): TrackedFile[] {
      return (bySha.all(shaToBlob(sha256)) as Row[]).map(toTracked);
    },
    /** Sets the remote status of the file(s) with this remote id; returns rows changed. */
    setRemoteStatus(remoteId: string, status: RemoteStatus): number {
      return statusById.run(status, nowMs(), remoteId, status).changes;
    },
    /** Records what the service's listing says of these copies (the `listed` fields), with one scan, in one transaction; returns rows changed. */
    recordListing: db.transaction((copies: readonly ListedCopy[]): number => {
      clearStaged.run();
      for (const c of copies) stage.run(c.id, ...listedValues(c));
      const changed = applyStaged.run(nowMs()).changes;
      clearStaged.run();
      return changed;
    }),
    /** How many files are tracked in their source now (a file deleted locally is not, as in `kbsync status`). */
    trackedCount(remoteStatus?: RemoteStatus): number {
      return (remoteStatus === undefined ? count.get() : countWith.get(remoteStatus)) as number;
    },
    /** True when some remote copy was last seen queued, processing or not yet listed: its outcome is still to learn. */
    hasUnsettledRemote(): boolean {
      return unsettled.get() !== undefined;
    },
    /** The files whose remote copy was last seen queued, processing or not yet listed. */
    unsettledCopies(): UnsettledCopy[] {
      return (unsettledRows.all() as [number, string, string, RemoteStatus][]).map(([id, path, remoteId, remoteStatus]) => ({
        source: sources.nameOf(id),
        path,
        remoteId,
        remoteStatus,
      }));
    },
    /** Writes a row inside a caller's transaction (settle, rebuild). */
    writeTracked: write,
    /** Writes a row inside a caller's transaction unless one exists at its source and path; true when written. */
    writeTrackedIfNew: (f: TrackedFileInput, at: number): boolean => insertNew.run(...argsOf(f, at)).changes > 0,
  };
}

/** Tracked files read a page at a time: a pass over a large state (passTrackedFiles), other statements free to run between two pages. */
function createTrackedPages(db: Database, sources: SourceIds) {
  const sourceRows = db.prepare(SOURCES_SQL).raw(true);
  // The primary key (source_id, path) delivers the page in path order; a page ends at its last path.
  const pageFirst = db.prepare(`SELECT ${COLUMNS} FROM files WHERE source_id = ? ORDER BY path LIMIT ?`);
  const pageAfter = db.prepare(`SELECT ${COLUMNS} FROM files WHERE source_id = ? AND path > ? ORDER BY path LIMIT ?`);
  return {
    /** Up to `limit` tracked files of one source after `after` (from its first when null), in path order. */
    trackedPage(source: string, after: string | null, limit: number): TrackedFile[] {
      const id = sources.findId(source);
      if (id === undefined) return [];
      const rows = (after === null ? pageFirst.all(id, limit) : pageAfter.all(id, after, limit)) as Row[];
      return rows.map((r) => trackedOfRow(r, source));
    },
    /** The names of the sources that have tracked rows, in (code-unit) order. */
    trackedSourceNames(): string[] {
      return (sourceRows.all() as [number, string][]).map((r) => r[1]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
function readColumns(
  source: string,
  row: BulkRow,
  readDetails: () => DetailsRow,
  readAsJson: (column: SeparatedColumn) => ColumnAgain,
): TrackedColumns {
  const [count, paths, sizes, mtimes, inodes, shas, names, ids, statuses, nullIds, deletedFlags] = row;
  const parse = <T>(column: string, json: string | null | undefined): T[] => {
    let values: T[];
    try {
      values = JSON.parse(json ?? '[]') as T[];
    } catch (err) {
      throw new Error(`tracked files of source "${source}": ${column} is not readable (${errorText(err)})`, { cause: err });
    }
    if (values.length !== count)
      throw new Error(`tracked files of source "${source}": ${column} holds ${values.length} values for ${count} files`);
    return values;
  };
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
  const sha256 = Sha256Column.fromHex(hex, count, `tracked files of source "${source}"`);
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
    mtimeNs: split('mtime_ns', mtimes, pathColumn),
    inodes: parse('inode', inodes),
    sha256,
    remoteNames,
    remoteIds,
    remoteStatuses: parse('remote_status', statuses),
    deleted,
    details: () => {
      const [files, ...columns] = readDetails();
      if (files !== count)
        throw new Error(
          `tracked files of source "${source}": changed while they were read (${count} at first, ${files} later): plan again`,
        );
      return Object.fromEntries(DETAIL_FIELDS.map((d, i) => [d.index, parse(d.column, columns[i])])) as TrackedDetails;
    },
  };
}
