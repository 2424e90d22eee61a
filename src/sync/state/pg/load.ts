import type { RemoteStatus, TrackedFile } from '../../types.js';
import { TrackedIndex } from '../../tracked/tracked-index.js';
import type { TrackedColumns, TrackedDetails } from '../../tracked/columns.js';
import { DETAIL_FIELDS } from '../../tracked/fields.js';
import { PackedColumn } from '../../tracked/packed-column.js';
import { sha256ColumnOfHex, SHA256_CODEC } from '../../tracked/sha256-column.js';
import { mtimeColumnOfText, MTIME_CODEC } from '../../tracked/mtime-column.js';
import { decodeRemoteName } from '../../tracked/codec.js';
import { SEP, type PgDetails, type PgTrackedSource } from './tracked.js';

/** The worker's reads this needs, as synchronous calls (see sync-bridge.ts). */
export type PgIndexReads = {
  /** Every source's runs of joined columns (tracked.ts, PgTrackedSource), each handed to `onRun` as it comes. */
  trackedSources(onRun: (run: PgTrackedSource) => void): void;
  trackedRowsOf(source: string): TrackedFile[];
  trackedDetailsOf(sourceId: number): PgDetails;
};

/** The packed columns come as one part a run, joined once the source is read. */
type Core = Omit<TrackedColumns, 'details' | 'detailsOf' | 'sha256' | 'mtimeNs'> & { sha256: PackedColumn[]; mtimeNs: PackedColumn[] };
/** One source's columns as its runs come; `split` false once a run's text did not split into one value per file. */
type Pending = { sourceId: number; source: string; split: boolean; columns: Core };

const emptyCore = (): Core => ({
  paths: [],
  sizes: [],
  mtimeNs: [],
  inodes: [],
  sha256: [],
  remoteNames: [],
  remoteIds: [],
  remoteStatuses: [],
  deleted: [],
});

/** Appends one run's values to its source's columns; false when a text column did not split into one value per file. */
function appendRun(c: Core, s: PgTrackedSource): boolean {
  const paths = s.paths.split(SEP);
  const names = s.remoteNames.split(SEP);
  const ids = s.remoteIds.split(SEP);
  if (paths.length !== s.count || names.length !== s.count || ids.length !== s.count || s.deletedFlags.length !== s.count) return false;
  const sizes = s.sizes.split(',');
  const inodes = s.inodes.split(',');
  const statuses = s.remoteStatuses.split(',');
  const what = `tracked files of source "${s.source}"`;
  c.sha256.push(sha256ColumnOfHex(s.sha256, s.count, what));
  c.mtimeNs.push(mtimeColumnOfText(s.mtimeNs, s.count, ',', what));
  for (let i = 0; i < s.count; i++) {
    const path = paths[i] as string;
    const stored = names[i] as string;
    c.paths.push(path);
    c.sizes.push(Number(sizes[i]));
    c.inodes.push(Number(inodes[i]));
    c.remoteNames.push(decodeRemoteName(s.source, path, stored === '' ? null : stored));
    c.remoteIds.push(s.nullIds[i] === '1' ? null : (ids[i] as string));
    const st = statuses[i] as string;
    c.remoteStatuses.push(st === '' ? null : (st as RemoteStatus));
    c.deleted.push(s.deletedFlags[i] === '1' ? 1 : 0);
  }
  return true;
}

/**
 * The TrackedIndex of the joined columns the worker reads, run by run (tracked.ts, PgTrackedSource):
 * each run is split while the worker reads the next. A source whose text columns do not split into
 * one value per file (a path or remote id holding the separator) is read again one row at a time.
 * The details are read when the first TrackedFile is made.
 */
export function trackedIndexOf(read: PgIndexReads): TrackedIndex {
  const index = new TrackedIndex();
  const errors = new Map<string, string>();
  const done: Pending[] = [];
  let current: Pending | null = null;
  read.trackedSources((run) => {
    if (current?.sourceId !== run.sourceId) {
      current = { sourceId: run.sourceId, source: run.source, split: true, columns: emptyCore() };
      done.push(current);
    }
    for (const [path, error] of run.remoteErrors) errors.set(`${run.source}\0${path}`, error);
    if (current.split) current.split = appendRun(current.columns, run);
  });
  for (const p of done) {
    if (!p.split) {
      for (const file of read.trackedRowsOf(p.source)) index.add(file);
      continue;
    }
    const columns = {
      ...p.columns,
      sha256: PackedColumn.joined(SHA256_CODEC, p.columns.sha256),
      mtimeNs: PackedColumn.joined(MTIME_CODEC, p.columns.mtimeNs),
    };
    index.addColumns(p.source, { ...columns, details: () => detailsInOrder(columns.paths, read.trackedDetailsOf(p.sourceId)) });
  }
  index.remoteErrorOf = (source, path) => errors.get(`${source}\0${path}`) ?? null;
  return index;
}

/** The details of a row another runner removed after the columns were read: none recorded (no attempt, no action, time 0). */
const GONE_DETAILS: readonly unknown[] = DETAIL_FIELDS.map((d) =>
  d.column === 'reprocess_attempts' || d.column === 'updated_at' ? 0 : null,
);

/**
 * The details lined up with the columns' rows (`paths`). The state is shared: another runner may
 * have removed a row since (a rename of its own files), which this plan then sees as it was read,
 * with GONE_DETAILS; a runner's own sources are written by it alone.
 */
function detailsInOrder(paths: readonly string[], d: PgDetails): TrackedDetails {
  const at = new Map(d.paths.map((p, i) => [p, i]));
  const out = DETAIL_FIELDS.map((): unknown[] => []);
  for (const path of paths) {
    const i = at.get(path);
    for (let c = 0; c < out.length; c++) out[c]?.push(i === undefined ? GONE_DETAILS[c] : d.columns[c]?.[i]);
  }
  return Object.fromEntries(DETAIL_FIELDS.map((f, c) => [f.index, out[c]])) as TrackedDetails;
}
