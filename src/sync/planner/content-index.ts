import type { TrackedIndex } from '../tracked-index.js';
import type { RemoteCopy } from '../types.js';

/** A copy of some content that is already in the dataset. */
export type DatasetCopy = { name: string; remoteId: string | null };

/** Where wanted content already lives in the dataset: by sha256, and the remote listing (wanted hashes only) by name. */
export type ContentIndex = {
  bySha: ReadonlyMap<string, DatasetCopy>;
  remoteByName: ReadonlyMap<string, readonly RemoteCopy[]>;
};

/**
 * Indexes where the wanted content (the candidates' sha256s) already is in the dataset: tracked rows
 * with a remote copy whose processing did not fail (including rows of vanished or changed paths:
 * their remote copies stay), then the remote listing. Only wanted hashes are indexed, so a few
 * changes in a large tree cost a scan, not a second 100k-entry map. For each sha256 the copy with
 * the smallest (source, path) wins, so the result never depends on input order.
 */
export function buildContentIndex(tracked: TrackedIndex, remote: readonly RemoteCopy[] | null, wanted: ReadonlySet<string>): ContentIndex {
  // Rows come in (source, path) order: the first row found with a hash is the one to keep.
  const bySha = new Map<string, number>();
  for (const row of tracked.rowsWithSha256(wanted)) {
    if (tracked.remoteIdAt(row) === null || tracked.remoteStatusAt(row) === 'failed') continue;
    const sha = tracked.sha256At(row);
    if (!bySha.has(sha)) bySha.set(sha, row);
  }
  const remoteBySha = new Map<string, RemoteCopy>();
  const remoteByName = new Map<string, RemoteCopy[]>();
  for (const r of remote ?? []) {
    if (r.sha256 === null || !wanted.has(r.sha256)) continue;
    const same = remoteByName.get(r.name);
    if (same === undefined) remoteByName.set(r.name, [r]);
    else same.push(r);
    if (r.status === 'failed') continue;
    const prev = remoteBySha.get(r.sha256);
    if (prev === undefined || r.name < prev.name || (r.name === prev.name && r.id < prev.id)) remoteBySha.set(r.sha256, r);
  }
  const result = new Map<string, DatasetCopy>();
  for (const [sha, row] of bySha) result.set(sha, { name: tracked.remoteNameAt(row), remoteId: tracked.remoteIdAt(row) });
  for (const [sha, r] of remoteBySha) if (!result.has(sha)) result.set(sha, { name: r.name, remoteId: r.id });
  return { bySha: result, remoteByName };
}

/** The remote copy already stored under this exact name with this content, if any (not failed). */
export function sameNameCopy(index: ContentIndex, name: string, sha256: string): RemoteCopy | undefined {
  const copies = index.remoteByName.get(name);
  if (copies === undefined) return undefined;
  let best: RemoteCopy | undefined;
  for (const r of copies) {
    if (r.sha256 !== sha256 || r.status === 'failed') continue;
    if (best === undefined || r.id < best.id) best = r;
  }
  return best;
}
