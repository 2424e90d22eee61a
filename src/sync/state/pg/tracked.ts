import type { RemoteStatus, TrackedFile } from '../../types.js';
import { shaToBlob } from '../../tracked/codec.js';
import type { TrackedFileInput } from '../../tracked/fields.js';
import type { TrackedOrigin, UnsettledCopy } from '../state-types.js';
import type { Db } from './db.js';
import type { PgSources } from './sources.js';
import {
  fileSelect,
  fileValues,
  PG_TYPES,
  trackedOfRow,
  upsertSet,
  UPSERT_COLUMNS,
  ALL_COLUMNS,
  LISTED_COLUMNS,
  LISTED_PG_TYPES,
  listedUpdate,
  listedValues,
  DETAIL_FIELDS,
  DETAIL_SELECT,
  type FileRow,
  type ListedCopy,
} from '../../tracked/fields.js';

/**
 * A run of one source's tracked files (up to CHUNK_ROWS, in path order) as columns, each joined into
 * one string by PostgreSQL (SEP between text values, commas between numbers): one message per run
 * crosses the thread boundary instead of one object per file, and splitting costs the main thread
 * little (a row per file took several times the SQLite load; bench/pg-state.ts). Runs, not one row
 * per source: a single value of a whole large source grew the driver's receive buffer and every copy
 * of it by its size at once. PostgreSQL text never holds a NUL, and SEP is U+0001: a path holding it
 * makes the column split into too many values, and the main thread then asks for that source's rows one by one.
 */
export type PgTrackedSource = {
  sourceId: number;
  source: string;
  count: number;
  paths: string;
  sizes: string;
  mtimeNs: string;
  inodes: string;
  /** 64 hex characters a file. */
  sha256: string;
  /** Stored (encoded) names; '' for NULL (a stored name is never empty). */
  remoteNames: string;
  remoteIds: string;
  /** '1' per file whose remote id is NULL, else '0'. */
  nullIds: string;
  /** '' for NULL. */
  remoteStatuses: string;
  /** '1' per file whose last action is 'deleted', else '0'. */
  deletedFlags: string;
  /** Failed copies' reasons by path. */
  remoteErrors: [string, string][];
};

/** The separator of joined text columns. */
export const SEP = '\u0001';

/** Files a run (PgTrackedSource) holds at most. */
export const CHUNK_ROWS = 20_000;

/** One source's details by path, read when the first TrackedFile is made: one column per detail field, in DETAIL_FIELDS' order. */
export type PgDetails = { paths: string[]; columns: unknown[][] };

// The rows come in path order (byte order, as SQLite's and TrackedIndex's): every aggregate reads the
// sorted subquery's rows in the same order, so the columns stay aligned; were they out of order, TrackedIndex sorts them.
// A run starts after the last path of the one before (the primary key's order): each row is read once.
const RUN = `SELECT count(*)::int AS count, max(path) AS last, string_agg(path, chr(1)) AS paths, string_agg(size::text, ',') AS sizes,
  string_agg(mtime_ns::text, ',') AS mtimes, string_agg(inode::text, ',') AS inodes, string_agg(encode(sha256, 'hex'), '') AS shas,
  string_agg(coalesce(remote_name, ''), chr(1)) AS names, string_agg(coalesce(remote_id, ''), chr(1)) AS ids,
  string_agg(CASE WHEN remote_id IS NULL THEN '1' ELSE '0' END, '') AS null_ids, string_agg(coalesce(remote_status, ''), ',') AS statuses,
  string_agg(CASE WHEN last_action = 'deleted' THEN '1' ELSE '0' END, '') AS deleted,
  json_agg(json_build_array(path, remote_error)) FILTER (WHERE remote_status = 'failed' AND remote_error IS NOT NULL) AS errors
  FROM (SELECT path, size, mtime_ns, inode, sha256, remote_name, remote_id, remote_status, last_action, remote_error
        FROM files WHERE source_id = $1 AND path > $2 ORDER BY path COLLATE "C" LIMIT ${CHUNK_ROWS}) AS f`;

const COLUMNS = `source_id, ${fileSelect('pg')}`;
type Row = FileRow & { source_id: number };

/** The PostgreSQL type of each upsert column (source_id's first). */
const UPSERT_TYPES = ['int', ...UPSERT_COLUMNS.slice(1).map((c) => PG_TYPES[ALL_COLUMNS.indexOf(c)] as string)];
const UPSERT = `INSERT INTO files (${UPSERT_COLUMNS.join(', ')})
  SELECT * FROM unnest(${UPSERT_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
const ON_CONFLICT_UPDATE = `ON CONFLICT (source_id, path) DO UPDATE SET ${upsertSet((a, b) => `${a} IS NOT DISTINCT FROM ${b}`)}`;

/** The `files` table on PostgreSQL (sqlite/tracked.ts is the SQLite one). */
export function createPgTracked(db: Db, sources: PgSources, scope: string) {
  // This runner's sources: remote statuses are written to their rows only. Rows of other runners that
  // track the same copy are theirs to update; writing them too would lock rows other runners' transactions hold.
  let own: number[] | null = null;
  const ownIds = async (): Promise<number[]> => {
    own ??= await Promise.all(
      scope
        .split(',')
        .filter((n) => n !== '')
        .map((n) => sources.idOf(n)),
    );
    return own;
  };
  const ownOnly = (param: string): string => (scope === '' ? '' : ` AND files.source_id = ANY(${param}::int[])`);
  const toTracked = async (r: Row): Promise<TrackedFile> => trackedOfRow(r, await sources.nameOf(r.source_id));
  const columnsOf = async (files: readonly TrackedFileInput[], at: number): Promise<unknown[][]> => {
    const cols: unknown[][] = Array.from({ length: UPSERT_COLUMNS.length }, () => []);
    for (const f of files) {
      const values = fileValues(f, await sources.idOf(f.source), at, (ns) => ns.toString());
      values.forEach((v, i) => (cols[i] as unknown[]).push(v));
    }
    return cols;
  };
  const write = async (files: readonly TrackedFileInput[], at: number): Promise<void> => {
    if (files.length > 0) await db.run(`${UPSERT} ${ON_CONFLICT_UPDATE}`, await columnsOf(files, at));
  };
  const keyOf = async (source: string, path: string): Promise<[number, string] | null> => {
    const id = await sources.findId(source);
    return id === undefined ? null : [id, path];
  };

  return {
    /**
     * Every source's files as runs of joined columns (see PgTrackedSource), sources by name in byte
     * order, each run handed on as it is read, all from one snapshot: a read-only repeatable-read
     * transaction (or the caller's open transaction).
     */
    async *streamTrackedSources(): AsyncGenerator<PgTrackedSource> {
      const own = !db.inTransaction();
      if (own) await db.q('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      // Sorting off: the primary key (source_id, path) already gives a source's rows in path order. Left to
      // the statistics, a table filled moments ago (before autovacuum's ANALYZE) was read by a bitmap scan and sorted on disk.
      await db.q('SET enable_sort = off');
      try {
        const named = await db.q<{ id: number; name: string }>('SELECT id, name FROM sources ORDER BY name COLLATE "C"');
        for (const { id, name } of named) {
          // A path is never empty: '' comes before every one.
          for (let after = ''; ;) {
            const r = (await db.q<Record<string, string | number | null>>(RUN, [id, after]))[0] as Record<string, string | number | null>;
            if (r.count === 0) break;
            yield {
              sourceId: id,
              source: name,
              count: r.count as number,
              paths: r.paths as string,
              sizes: r.sizes as string,
              mtimeNs: r.mtimes as string,
              inodes: r.inodes as string,
              sha256: r.shas as string,
              remoteNames: r.names as string,
              remoteIds: r.ids as string,
              nullIds: r.null_ids as string,
              remoteStatuses: r.statuses as string,
              deletedFlags: r.deleted as string,
              remoteErrors: (r.errors ?? []) as unknown as [string, string][],
            };
            if ((r.count as number) < CHUNK_ROWS) break;
            after = r.last as string;
          }
        }
      } finally {
        // After a failed read the transaction has aborted: RESET fails too, and the rollback undoes the SET.
        await db.q('RESET enable_sort').catch(() => {});
        // COMMIT ends an aborted transaction as a rollback.
        if (own) await db.q('COMMIT').catch(() => {});
      }
    },
    /** One source's rows, one by one (when a joined column did not split into one value per file). */
    async trackedRowsOf(source: string): Promise<TrackedFile[]> {
      const id = await sources.findId(source);
      if (id === undefined) return [];
      const rows = await db.q<Row>(`SELECT ${COLUMNS} FROM files WHERE source_id = $1 ORDER BY path COLLATE "C"`, [id]);
      return Promise.all(rows.map(toTracked));
    },
    ...createPgTrackedPages(db, sources),
    /** One source's details by path (see PgDetails). */
    async trackedDetailsOf(sourceId: number): Promise<PgDetails> {
      const rows = await db.q<Record<string, unknown>>(`SELECT path, ${DETAIL_SELECT} FROM files WHERE source_id = $1`, [sourceId]);
      return { paths: rows.map((r) => r.path as string), columns: DETAIL_FIELDS.map((d) => rows.map((r) => r[d.column] ?? null)) };
    },
    async getTracked(source: string, path: string): Promise<TrackedFile | null> {
      const key = await keyOf(source, path);
      if (key === null) return null;
      const rows = await db.q<Row>(`SELECT ${COLUMNS} FROM files WHERE source_id = $1 AND path = $2`, key);
      return rows[0] === undefined ? null : toTracked(rows[0]);
    },
    async upsertTracked(f: TrackedFileInput): Promise<void> {
      await write([f], db.nowMs());
    },
    async upsertTrackedMany(files: readonly TrackedFileInput[]): Promise<void> {
      await db.tx(() => write(files, db.nowMs()));
    },
    async markDeleted(source: string, path: string, reason = 'deleted locally; the remote copy remains'): Promise<boolean> {
      const key = await keyOf(source, path);
      if (key === null) return false;
      const sql = `UPDATE files SET last_action = 'deleted', last_reason = $3, updated_at = $4 WHERE source_id = $1 AND path = $2`;
      return (await db.run(sql, [...key, reason, db.nowMs()])) > 0;
    },
    async removeTracked(source: string, path: string): Promise<boolean> {
      const key = await keyOf(source, path);
      return key !== null && (await db.run('DELETE FROM files WHERE source_id = $1 AND path = $2', key)) > 0;
    },
    async findBySha256(sha256: string): Promise<TrackedFile[]> {
      const rows = await db.q<Row>(`SELECT ${COLUMNS} FROM files WHERE sha256 = $1 ORDER BY source_id, path COLLATE "C"`, [
        shaToBlob(sha256),
      ]);
      return Promise.all(rows.map(toTracked));
    },
    async setRemoteStatus(remoteId: string, status: RemoteStatus): Promise<number> {
      return db.run(
        `UPDATE files SET remote_status = $1, updated_at = $2 WHERE remote_id = $3 AND remote_status IS DISTINCT FROM $1${ownOnly('$4')}`,
        [status, db.nowMs(), remoteId, ...(scope === '' ? [] : [await ownIds()])],
      );
    },
    /** Records what the service's listing says of these copies (the `listed` fields); returns rows changed. */
    async recordListing(copies: readonly ListedCopy[]): Promise<number> {
      const rows = copies.map(listedValues);
      const arrays = LISTED_COLUMNS.map((_, i) => rows.map((r) => r[i]));
      const n = LISTED_COLUMNS.length;
      const cast = LISTED_PG_TYPES.map((t, i) => `$${i + 3}::${t}[]`).join(', ');
      const listed = listedUpdate((a, b) => `${a} IS DISTINCT FROM ${b}`, '$2');
      return db.run(
        `UPDATE files SET ${listed.set}
           FROM unnest($1::text[], ${cast}) AS u (remote_id, ${LISTED_COLUMNS.join(', ')})
          WHERE files.remote_id = u.remote_id AND ${listed.changed}${ownOnly(`$${n + 3}`)}`,
        [copies.map((c) => c.id), db.nowMs(), ...arrays, ...(scope === '' ? [] : [await ownIds()])],
      );
    },
    /** The tracked file each remote id was uploaded from (see sqlite/remote-paths.ts for the order of preference). */
    async originsOfRemoteIds(remoteIds: readonly string[]): Promise<Map<string, TrackedOrigin>> {
      const found = new Map<string, TrackedOrigin>();
      if (remoteIds.length === 0) return found;
      const rows = await db.q<{ remote_id: string; source: string; path: string }>(
        `SELECT f.remote_id, s.name AS source, f.path FROM files f JOIN sources s ON s.id = f.source_id
          WHERE f.remote_id = ANY($1::text[])
          ORDER BY (f.remote_name IS NULL OR f.remote_name = '/') DESC, s.name COLLATE "C", f.path`,
        [[...new Set(remoteIds)]],
      );
      for (const r of rows) if (!found.has(r.remote_id)) found.set(r.remote_id, { source: r.source, path: r.path });
      // Files and intelligence entries share the service's knowledge-source ids: an id is one or the other.
      const rest = [...new Set(remoteIds)].filter((id) => !found.has(id));
      if (rest.length > 0) {
        const entries = await db.q<{ remote_id: string; source: string; path: string }>(
          `SELECT e.remote_id, s.name AS source, e.path FROM intel_entries e JOIN sources s ON s.id = e.source_id
            WHERE e.path IS NOT NULL AND e.remote_id = ANY($1::text[])`,
          [rest],
        );
        for (const r of entries) if (!found.has(r.remote_id)) found.set(r.remote_id, { source: r.source, path: r.path, entry: true });
      }
      return found;
    },
    async trackedCount(remoteStatus?: RemoteStatus): Promise<number> {
      const live = "SELECT count(*)::int AS n FROM files WHERE last_action IS DISTINCT FROM 'deleted'";
      const rows =
        remoteStatus === undefined
          ? await db.q<{ n: number }>(live)
          : await db.q<{ n: number }>(`${live} AND remote_status = $1`, [remoteStatus]);
      return rows[0]?.n ?? 0;
    },
    async hasUnsettledRemote(): Promise<boolean> {
      const rows = await db.q(
        `SELECT 1 FROM files WHERE remote_id IS NOT NULL AND remote_status IN ('queued','processing','unknown') LIMIT 1`,
      );
      return rows.length > 0;
    },
    async unsettledCopies(): Promise<UnsettledCopy[]> {
      const rows = await db.q<{ source: string; path: string; remote_id: string; remote_status: RemoteStatus }>(
        `SELECT s.name AS source, f.path, f.remote_id, f.remote_status FROM files f JOIN sources s ON s.id = f.source_id
          WHERE f.remote_id IS NOT NULL AND f.remote_status IN ('queued','processing','unknown')`,
      );
      return rows.map((r) => ({ source: r.source, path: r.path, remoteId: r.remote_id, remoteStatus: r.remote_status }));
    },
    /** Writes rows inside a caller's transaction (settle). */
    writeTracked: (f: TrackedFileInput, at: number): Promise<void> => write([f], at),
    /**
     * Writes rebuilt rows unless one exists at their source and path, or their remote copy is tracked
     * already (by another runner: with one source a runner's name mapper takes every listed name for
     * its own); returns how many were written.
     */
    async writeTrackedIfNew(files: readonly TrackedFileInput[], at: number): Promise<number> {
      if (files.length === 0) return 0;
      return db.run(
        `${UPSERT} AS t (${UPSERT_COLUMNS.join(', ')})
           WHERE t.remote_id IS NULL OR NOT EXISTS (SELECT 1 FROM files WHERE remote_id = t.remote_id)
         ON CONFLICT (source_id, path) DO NOTHING`,
        await columnsOf(files, at),
      );
    },
  };
}

export type PgTracked = ReturnType<typeof createPgTracked>;

/** Tracked files read a page at a time (passTrackedFiles): a pass over a shared state of any size, none held. */
function createPgTrackedPages(db: Db, sources: PgSources) {
  return {
    /** The names of the sources that have tracked rows, in byte order (as streamTrackedSources gives them). */
    async trackedSourceNames(): Promise<string[]> {
      const rows = await db.q<{ name: string }>(
        'SELECT name FROM sources s WHERE EXISTS (SELECT 1 FROM files f WHERE f.source_id = s.id) ORDER BY name COLLATE "C"',
      );
      return rows.map((r) => r.name);
    },
    /** Up to `limit` tracked files of one source after `after` (from its first when null), in path order. */
    async trackedPage(source: string, after: string | null, limit: number): Promise<TrackedFile[]> {
      const id = await sources.findId(source);
      if (id === undefined) return [];
      // A path is never empty: '' comes before every one.
      const rows = await db.q<Row>(`SELECT ${COLUMNS} FROM files WHERE source_id = $1 AND path > $2 ORDER BY path COLLATE "C" LIMIT $3`, [
        id,
        after ?? '',
        limit,
      ]);
      return rows.map((r) => trackedOfRow(r, source));
    },
  };
}
