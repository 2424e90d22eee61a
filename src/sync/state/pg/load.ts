import type { RemoteStatus, TrackedFile } from '../../types.js';
import { TrackedIndex } from '../../tracked/tracked-index.js';
import type { TrackedDetails } from '../../tracked/columns.js';
import { DETAIL_FIELDS } from '../../tracked/fields.js';
import { decodeRemoteName } from '../../tracked/codec.js';
import { SEP, type PgDetails, type PgTrackedSource } from './tracked.js';

/** The worker's reads this needs, as synchronous calls (see sync-bridge.ts). */
export type PgIndexReads = {
  trackedRowsOf(source: string): TrackedFile[];
  trackedDetailsOf(sourceId: number): PgDetails;
};

/**
 * The TrackedIndex of the joined columns the worker read (tracked.ts, PgTrackedSource). A source
 * whose text columns do not split into one value per file (a path or remote id holding the separator)
 * is read again one row at a time. The details are read when the first TrackedFile is made.
 */
export function trackedIndexOf(list: readonly PgTrackedSource[], read: PgIndexReads): TrackedIndex {
  const index = new TrackedIndex();
  const errors = new Map<string, string>();
  for (const s of list) {
    for (const [path, error] of s.remoteErrors) errors.set(`${s.source}\0${path}`, error);
    const paths = s.paths.split(SEP);
    const names = s.remoteNames.split(SEP);
    const ids = s.remoteIds.split(SEP);
    if (paths.length !== s.count || names.length !== s.count || ids.length !== s.count || s.deletedFlags.length !== s.count) {
      for (const file of read.trackedRowsOf(s.source)) index.add(file);
      continue;
    }
    const sha256: string[] = new Array<string>(s.count);
    for (let i = 0; i < s.count; i++) sha256[i] = s.sha256.slice(i * 64, i * 64 + 64);
    const statuses = s.remoteStatuses.split(',');
    index.addColumns(s.source, {
      paths,
      sizes: s.sizes.split(',').map(Number),
      mtimeNs: s.mtimeNs.split(','),
      inodes: s.inodes.split(',').map(Number),
      sha256,
      remoteNames: names.map((stored, i) => decodeRemoteName(s.source, paths[i] as string, stored === '' ? null : stored)),
      remoteIds: ids.map((id, i) => (s.nullIds[i] === '1' ? null : id)),
      remoteStatuses: statuses.map((st) => (st === '' ? null : (st as RemoteStatus))),
      deleted: Array.from({ length: s.count }, (_, i) => (s.deletedFlags[i] === '1' ? 1 : 0)),
      details: () => detailsInOrder(s, paths, read.trackedDetailsOf(s.sourceId)),
    });
  }
  index.remoteErrorOf = (source, path) => errors.get(`${source}\0${path}`) ?? null;
  return index;
}

/** The details lined up with the columns' rows (`paths`), refused when the rows changed in between. */
function detailsInOrder(s: PgTrackedSource, paths: readonly string[], d: PgDetails): TrackedDetails {
  const at = new Map(d.paths.map((p, i) => [p, i]));
  const out = DETAIL_FIELDS.map((): unknown[] => []);
  for (const path of paths) {
    const i = at.get(path);
    if (i === undefined)
      throw new Error(`tracked files of source "${s.source}": changed while they were read (${path} is gone): plan again`);
    for (let c = 0; c < out.length; c++) out[c]?.push(d.columns[c]?.[i]);
  }
  return Object.fromEntries(DETAIL_FIELDS.map((f, c) => [f.index, out[c]])) as TrackedDetails;
}
