import { extensionOf } from '../../shared/file-types.js';
import type { TrackedIndex } from '../tracked/tracked-index.js';
import type { HeldCopy, RemoteCopy, RemoteStatus } from '../types.js';

/** A copy of some content that is already in the dataset; `tracked`: a tracked path points at it (else it is listed). */
export type DatasetCopy = { name: string; remoteId: string | null; tracked: boolean };

/** A tracked copy whose processing failed for a reason the same bytes of the same type meet again; `from`: its row. */
export type FailedCopy = { name: string; remoteId: string; error: string; from: { source: string; path: string } };

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
  /** Copies that failed for good, by sha256, then by the extension of their name (the type the service parsed them as). */
  failed: ReadonlyMap<string, ReadonlyMap<string, FailedCopy>>;
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
  const failed = new Map<string, Map<string, FailedCopy>>();
  for (const row of tracked.rowsWithSha256(wanted)) {
    if (tracked.remoteIdAt(row) === null) continue;
    const sha = tracked.sha256At(row);
    if (tracked.remoteStatusAt(row) === 'failed') addFailed(failed, tracked, row, sha);
    else if (!bySha.has(sha)) bySha.set(sha, row);
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
  return { bySha: result, remoteByName, held: reusableHeld(heldCopies, remote, wanted, heldIds), heldIds, failed };
}

/**
 * Codes of a processing error (shared/processing-errors.ts) that the same bytes meet again whatever their
 * path, as long as they are read as the same type: the file itself is refused. Not file_missing, also
 * permanent for its copy: that is the service's loss, and a new upload of the same bytes mends it.
 */
const FAILS_AGAIN = /^(parse_failed|unsupported_type): /;

/** Records a failed row's copy when its error is one the same bytes meet again; the first row (in path order) of each type wins. */
function addFailed(failed: Map<string, Map<string, FailedCopy>>, tracked: TrackedIndex, row: number, sha: string): void {
  const t = tracked.fileAt(row);
  const error = t.remoteError;
  if (error == null || !FAILS_AGAIN.test(error)) return;
  let byType = failed.get(sha);
  if (byType === undefined) failed.set(sha, (byType = new Map()));
  const type = extensionOf(t.remoteName);
  if (!byType.has(type))
    byType.set(type, { name: t.remoteName, remoteId: t.remoteId as string, error, from: { source: t.source, path: t.path } });
}

/** The copy of this content that failed for good as the type of `path`, if any. */
export function failedCopyFor(index: ContentIndex, sha256: string, path: string): FailedCopy | undefined {
  return index.failed.get(sha256)?.get(extensionOf(path));
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
