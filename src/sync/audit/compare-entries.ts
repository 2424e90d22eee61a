import type { TrackedEntry } from '../state/index.js';
import type { AuditItem } from './compare.js';

/**
 * Kinds of drift of the intelligence entries (sources with `as: intelligence`):
 * - `entry-untracked`: an entry of the dataset's listing the state does not know (written by hand, by another tool);
 * - `entry-missing-remote`: an entry the state tracks that the listing does not have;
 * - `entry-not-written`: a record of a source whose content the dataset does not hold yet (a sync writes it);
 * - `entry-edited`: an entry written from a record since edited: the old entry stays (the API has no delete);
 * - `entry-removed`: an entry written from a record since removed (or its file, or its source): it stays;
 * - `entry-failed`: an entry the service failed to process.
 */
export type EntryAuditKind =
  'entry-untracked' | 'entry-missing-remote' | 'entry-not-written' | 'entry-edited' | 'entry-removed' | 'entry-failed';

export const ENTRY_AUDIT_KINDS: readonly EntryAuditKind[] = [
  'entry-untracked',
  'entry-missing-remote',
  'entry-not-written',
  'entry-edited',
  'entry-removed',
  'entry-failed',
];

/** A listed entry, as much as the audit reads (the client's IntelligenceEntry fits). */
export type AuditEntryRemote = { id: string; sha256: string | null; status: string; title: string | null };

/** A record of an intelligence source as read now (the reader's EntryCandidate fits). */
export type AuditEntryLocal = { source: string; path: string; sha256: string };

export type EntryAuditInput = {
  /** The records the intelligence sources hold now. */
  local: readonly AuditEntryLocal[];
  /** The state's entries (intel_entries), by content SHA-256. */
  tracked: ReadonlyMap<string, TrackedEntry>;
  /** The dataset's entry listing (`GET /datasets/intelligence`, free). */
  listing: readonly AuditEntryRemote[];
};

/** The entry findings, and what was compared: records read, entries tracked, entries listed. */
export type EntryAudit = { items: AuditItem[]; local: number; tracked: number; remote: number };

/**
 * The three-way comparison of the intelligence sources' records, the state's entries and the dataset's
 * entry listing. Entries are content (one per SHA-256): an edited record is new content, and the entry
 * written from its old content stays in the dataset. Pure.
 */
export function auditEntries(input: EntryAuditInput): EntryAudit {
  const items: AuditItem[] = [];
  const listed = new Map(input.listing.map((e) => [e.id, e]));
  const localShas = new Set(input.local.map((e) => e.sha256));
  const localPlaces = new Set(input.local.map((e) => `${e.source}\0${e.path}`));
  const trackedIds = new Set<string>();
  /** Entries reported as left behind: their status goes in their detail, not in a finding of its own. */
  const outdated = new Set<string>();
  const push = (
    kind: EntryAuditKind,
    path: string | null,
    remote: AuditEntryRemote | null,
    detail: string,
    remoteId?: string | null,
  ): void => {
    items.push({
      kind,
      path,
      remoteId: remote?.id ?? remoteId ?? null,
      remoteName: remote?.title ?? null,
      remoteStatus: remote?.status ?? null,
      detail,
      error: null,
    });
  };

  for (const t of input.tracked.values()) {
    if (t.remoteId === null) continue;
    trackedIds.add(t.remoteId);
    const remote = listed.get(t.remoteId) ?? null;
    const path = t.source === null || t.path === null ? null : `${t.source}/${t.path}`;
    if (remote === null) {
      push(
        'entry-missing-remote',
        path,
        null,
        `tracked as entry ${t.remoteId}, which the dataset's entry listing does not have`,
        t.remoteId,
      );
      continue;
    }
    // An entry adopted from the listing (no source known) is nobody's record: it cannot be left behind by one.
    if (t.source === null || t.path === null || localShas.has(t.sha256)) continue;
    outdated.add(remote.id);
    const edited = localPlaces.has(`${t.source}\0${t.path}`);
    push(
      edited ? 'entry-edited' : 'entry-removed',
      path,
      remote,
      `${edited ? 'its record was edited since' : 'its record is gone from the source'}: the entry (id ${remote.id}) with the old content stays in the dataset (the API has no delete)${statusNote(t, remote)}`,
    );
  }

  const trackedShas = new Set(input.tracked.keys());
  const firstPlace = new Map<string, AuditEntryLocal>();
  for (const e of input.local) if (!firstPlace.has(e.sha256)) firstPlace.set(e.sha256, e);
  for (const e of firstPlace.values()) {
    if (trackedShas.has(e.sha256)) continue;
    push('entry-not-written', `${e.source}/${e.path}`, null, 'not in the dataset yet (a sync writes it, 1 credit)');
  }

  for (const e of input.listing) {
    const known = trackedIds.has(e.id) || (e.sha256 !== null && trackedShas.has(e.sha256));
    if (!known) {
      const local = e.sha256 === null ? undefined : firstPlace.get(e.sha256);
      push(
        'entry-untracked',
        local === undefined ? null : `${local.source}/${local.path}`,
        e,
        local === undefined
          ? 'the state does not know this entry (written by hand, by another tool or an older state)'
          : `the state does not track this entry, which holds the content of ${local.source}/${local.path}`,
      );
    }
    if (outdated.has(e.id)) continue;
    if (e.status === 'failed') {
      const t = e.sha256 === null ? undefined : input.tracked.get(e.sha256);
      const path = t?.source != null && t.path !== null ? `${t.source}/${t.path}` : null;
      push('entry-failed', path, e, `the service failed to process it${t?.error != null ? `: ${t.error}` : ''}`);
      if (t?.error != null) (items[items.length - 1] as AuditItem).error = t.error;
    }
  }
  return { items, local: input.local.length, tracked: input.tracked.size, remote: input.listing.length };
}

/** A left-behind entry's status when it is not `processed` (the state's error for a failed one, from its webhook). */
function statusNote(t: TrackedEntry, remote: AuditEntryRemote): string {
  if (remote.status === 'processed') return '';
  return remote.status === 'failed' ? ` (processing failed${t.error === null ? '' : `: ${t.error}`})` : ` (still ${remote.status})`;
}
