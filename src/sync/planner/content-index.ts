import type { TrackedIndex } from '../tracked/tracked-index.js';
import type { HeldCopy, RemoteCopy, RemoteStatus } from '../types.js';

/** A copy of some content that is already in the dataset; `tracked`: a tracked path points at it (else it is listed). */
export type DatasetCopy = { name: string; remoteId: string | null; tracked: boolean };

/**
 * Where wanted content already lives in the dataset: by sha256, the remote listing (wanted hashes only)
 * by name, and the held copies no tracked path points at that can be reused, by sha256.
 */
export type ContentIndex = {
  bySha: ReadonlyMap<string, DatasetCopy>;
  remoteByName: ReadonlyMap<string, readonly RemoteCopy[]>;
  held: ReadonlyMap<string, HeldCopy & { status: RemoteStatus }>;
  /** The ids of every held copy that may be reused (`held` keeps one per sha256). */
  heldIds: ReadonlySet<string>;
};

/** Statuses of a held copy that may be reused: processed, or on its way there (never failed or unknown). */
const REUSABLE: ReadonlySet<RemoteStatus | null> = new Set<RemoteStatus>(['processed', 'processing', 'queued']);

/**
 * Indexes where the wanted content (the candidates' sha256s) already is in the dataset: tracked rows
 * with a remote copy whose processing did not fail (including rows of vanished or changed paths:
 * their remote copies stay), then the remote listing. Only wanted hashes are indexed, so a few
 * changes in a large tree cost a scan, not a second 100k-entry map. For each sha256 the copy with
 * the smallest (source, path) wins, so the result never depends on input order.
 */
export function buildContentIndex(
  tracked: TrackedIndex,
  remote: readonly RemoteCopy[] | null,
  wanted: ReadonlySet<string>,
  heldCopies: readonly HeldCopy[] = [],
): ContentIndex {
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
  for (const [sha, row] of bySha) result.set(sha, { name: tracked.remoteNameAt(row), remoteId: tracked.remoteIdAt(row), tracked: true });
  for (const [sha, r] of remoteBySha) if (!result.has(sha)) result.set(sha, { name: r.name, remoteId: r.id, tracked: false });
  const heldIds = new Set<string>();
  return { bySha: result, remoteByName, held: reusableHeld(heldCopies, remote, wanted, heldIds), heldIds };
}

/**
 * The held copy to reuse for each wanted sha256: not failed; when this pass fetched the listing, it is
 * the truth (a copy it does not list is gone, and its status there is the current one). A processed
 * copy beats one still on its way; then the smallest id, so the choice never depends on input order.
 */
function reusableHeld(
  heldCopies: readonly HeldCopy[],
  remote: readonly RemoteCopy[] | null,
  wanted: ReadonlySet<string>,
  ids: Set<string>,
): Map<string, HeldCopy & { status: RemoteStatus }> {
  const result = new Map<string, HeldCopy & { status: RemoteStatus }>();
  if (heldCopies.length === 0) return result;
  const listed = remote === null ? null : new Map(remote.map((r) => [r.id, r]));
  for (const h of heldCopies) {
    if (!wanted.has(h.sha256)) continue;
    let status = h.status;
    if (listed !== null) {
      const r = listed.get(h.remoteId);
      if (r === undefined || (r.sha256 !== null && r.sha256 !== h.sha256)) continue;
      status = REUSABLE.has(r.status as RemoteStatus) ? (r.status as RemoteStatus) : null;
    }
    if (status === null || !REUSABLE.has(status)) continue;
    const copy = { ...h, status };
    ids.add(h.remoteId);
    const prev = result.get(h.sha256);
    if (prev === undefined || betterHeld(copy, prev)) result.set(h.sha256, copy);
  }
  return result;
}

function betterHeld(a: HeldCopy, b: HeldCopy): boolean {
  const ap = a.status === 'processed';
  const bp = b.status === 'processed';
  if (ap !== bp) return ap;
  return a.remoteId < b.remoteId;
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
