import type { Database } from 'better-sqlite3';
import type { RemoteStatus, TrackedFile } from '../../types.js';
import { shaToBlob } from '../../tracked/codec.js';
import {
  fileSelect,
  fileValues,
  listedUpdate,
  listedValues,
  trackedOfRow,
  upsertSet,
  LISTED_COLUMNS,
  UPSERT_COLUMNS,
  type FileRow,
  type ListedCopy,
  type TrackedFileInput,
} from '../../tracked/fields.js';
import type { SourceIds } from './sources.js';
import { createTrackedLoad, SOURCES_SQL } from './tracked-bulk.js';
import type { UnsettledCopy } from '../state-types.js';

export type { TrackedFileInput } from '../../tracked/fields.js';

export { trackedKey } from '../../tracked/keys.js';

export type TrackedFiles = ReturnType<typeof createTrackedFiles>;

// Hex and text conversions happen in SQLite: cheaper than a Buffer and a BigInt per row in JS.
const COLUMNS = `source_id, ${fileSelect('sqlite')}`;
type Row = FileRow & { source_id: number };

/** The `files` table: what kbsync last sent (or decided) per source path. */
export function createTrackedFiles(db: Database, sources: SourceIds, nowMs: () => number) {
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
    ...createTrackedLoad(db, sources),
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
