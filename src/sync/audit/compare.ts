import { remoteNameMapper } from '../executor/remote-names.js';
import { trackedKey } from '../tracked/keys.js';
import { planPath } from '../../shared/plan-path.js';
import type { ObservedFile, SkippedPath, TrackedFile } from '../types.js';
import { auditEntries, ENTRY_AUDIT_KINDS, type EntryAuditInput, type EntryAuditKind } from './compare-entries.js';

/**
 * Kinds of drift between the sources, the state and the dataset:
 * - `remote-untracked`: a remote file the state does not know (uploaded by hand, by another tool, by an older state);
 * - `missing-remote`: a tracked file whose remote copy is not in the listing;
 * - `changed`: a tracked file whose local content differs from the copy in the dataset (not synced since);
 * - `not-uploaded`: a local file with no copy in the dataset;
 * - `stale-copy`: an older copy of a file whose content was uploaded again (the API has no delete or replace);
 * - `deleted-remains`: the remote copy of a file deleted locally;
 * - `processing`: a remote copy still queued or processing;
 * - `failed`: a remote copy the service failed to process (with its error).
 * An outdated copy (`stale-copy`, `deleted-remains`) that failed or is still processing says so in its
 * own detail (and `error`): its status is no finding of its own. The `entry-*` kinds are the intelligence
 * entries' (compare-entries.ts).
 */
export type AuditKind =
  | 'remote-untracked'
  | 'missing-remote'
  | 'changed'
  | 'not-uploaded'
  | 'stale-copy'
  | 'deleted-remains'
  | 'processing'
  | 'failed'
  | EntryAuditKind;

export const AUDIT_KINDS: readonly AuditKind[] = [
  'remote-untracked',
  'missing-remote',
  'changed',
  'not-uploaded',
  'stale-copy',
  'deleted-remains',
  'processing',
  'failed',
  ...ENTRY_AUDIT_KINDS,
];

/** One finding: a path (as `kbsync plan` prints it) and/or a remote copy, and what is wrong. */
export type AuditItem = {
  kind: AuditKind;
  /** The local path as `kbsync plan` prints it; null for a remote file that maps to none of ours. */
  path: string | null;
  remoteId: string | null;
  remoteName: string | null;
  /** The copy's status in the listing, when listed. */
  remoteStatus: string | null;
  /** One line for people. */
  detail: string;
  /** The service's error for a failed copy. */
  error: string | null;
};

/** `kbsync audit`'s result (its `--json` document). */
export type AuditReport = {
  kind: 'audit';
  auditedAt: string;
  summary: {
    /** Local files found by the walk (supported types). */
    local: number;
    /** Tracked files in their source now, as `kbsync status` counts them (`tracked.files`). */
    tracked: number;
    /** Tracked rows of files deleted locally whose remote copies are kept (status's `tracked.deleted`). */
    trackedDeleted: number;
    remote: number;
    drift: number;
    byKind: Record<AuditKind, number>;
    /** With intelligence sources: records read from them, entries tracked, entries in the dataset's listing. */
    entries?: { local: number; tracked: number; remote: number };
  };
  /** Sorted by kind (in AUDIT_KINDS order), then path, then remote id. */
  items: AuditItem[];
};

/** A listed remote file, as much as the audit reads (the client's RemoteFile fits). */
export type AuditRemote = {
  id: string;
  name: string;
  sha256: string | null;
  status: string;
  error: string | null;
  updatedAt: string | null;
};

export type AuditInput = {
  /** Supported local files the walk found, with their content hash (null: changing while hashed). */
  observed: readonly ObservedFile[];
  /** Paths the walk saw and left out (excluded, ignored...): a tracked one is not deleted locally. */
  skipped?: readonly SkippedPath[];
  tracked: Iterable<TrackedFile>;
  listing: readonly AuditRemote[];
  sourceNames: readonly string[];
  /** Files over this size are never uploaded (the plan's limit): not counted as `not-uploaded`; nor are empty files. */
  maxFileBytes: number;
  now: Date;
  /** With intelligence sources: their records, the state's entries and the entry listing. */
  entries?: EntryAuditInput;
};

/** The three-way comparison of the walk, the state and the remote listing. Pure. */
export function auditDataset(input: AuditInput): AuditReport {
  const multi = input.sourceNames.length > 1;
  const items: AuditItem[] = [];
  const listed = new Map(input.listing.map((f) => [f.id, f]));
  const observed = new Map(input.observed.map((f) => [trackedKey(f.source, f.path), f]));
  const leftOut = new Map((input.skipped ?? []).map((f) => [trackedKey(f.source, f.path), f]));
  const trackedKeys = new Set<string>();
  const trackedIds = new Set<string>();
  const currentPaths = new Set<string>();
  /** Copies reported as outdated (stale, or of a deleted file): their status is in their detail, not a finding of its own. */
  const outdated = new Set<string>();
  let trackedCount = 0;
  const push = (kind: AuditKind, path: string | null, remote: AuditRemote | null, detail: string, extra: Partial<AuditItem> = {}): void => {
    items.push({
      kind,
      path,
      remoteId: remote?.id ?? null,
      remoteName: remote?.name ?? null,
      remoteStatus: remote?.status ?? null,
      detail,
      error: null,
      ...extra,
    });
  };

  let deletedCount = 0;
  for (const t of input.tracked) {
    if (t.lastAction === 'deleted') deletedCount++;
    else trackedCount++;
    const key = trackedKey(t.source, t.path);
    trackedKeys.add(key);
    const path = planPath(t.source, t.path, multi);
    const local = observed.get(key);
    if (local !== undefined) currentPaths.add(path);
    if (t.remoteId === null) continue;
    trackedIds.add(t.remoteId);
    const remote = listed.get(t.remoteId) ?? null;
    if (local === undefined) {
      if (remote !== null) {
        outdated.add(remote.id);
        const skip = leftOut.get(key);
        const gone = skip === undefined ? 'deleted locally' : `left out of the sync (${skip.reason}: ${skip.detail})`;
        push(
          'deleted-remains',
          path,
          remote,
          `${gone}; its remote copy (id ${remote.id}) remains (the API has no delete)${statusNote(remote)}`,
          {
            error: remote.error,
          },
        );
      }
      continue;
    }
    if (remote === null) {
      push('missing-remote', path, null, `tracked as remote id ${t.remoteId}, which the dataset does not list`, {
        remoteId: t.remoteId,
        remoteName: t.remoteName,
      });
      continue;
    }
    if (local.sha256 !== null && local.sha256 !== t.sha256) {
      push(
        'changed',
        path,
        remote,
        `changed locally since its upload (sha256 ${short(t.sha256)} -> ${short(local.sha256)}): the copy in the dataset is stale`,
      );
    } else if (remote.sha256 !== null && remote.sha256 !== t.sha256) {
      push(
        'changed',
        path,
        remote,
        `the dataset's copy has other content (sha256 ${short(remote.sha256)}) than the one tracked (${short(t.sha256)})`,
      );
    }
  }

  const bySha = new Map<string, AuditRemote>();
  for (const f of input.listing) if (f.sha256 !== null && !bySha.has(f.sha256)) bySha.set(f.sha256, f);
  for (const f of input.observed) {
    // Over the size limit or empty (skip:empty): a sync never uploads it.
    if (trackedKeys.has(trackedKey(f.source, f.path)) || f.size > input.maxFileBytes || f.size === 0) continue;
    // A moved file or a copy of another: its content is in the dataset already, and a sync records it for free.
    const held = f.sha256 === null ? undefined : bySha.get(f.sha256);
    const detail =
      held === undefined
        ? 'not in the dataset yet (a sync uploads it)'
        : `not tracked; its content is in the dataset as ${held.name} (id ${held.id}): a sync records it without an upload`;
    push('not-uploaded', planPath(f.source, f.path, multi), null, detail);
  }

  const mapName = remoteNameMapper(input.sourceNames);
  for (const f of input.listing) {
    if (!trackedIds.has(f.id)) {
      const mapped = mapName(f.name);
      const local = mapped === null ? undefined : observed.get(trackedKey(mapped.source, mapped.path));
      const path = mapped === null ? null : planPath(mapped.source, mapped.path, multi);
      const ours = mapped !== null && trackedKeys.has(trackedKey(mapped.source, mapped.path));
      if (ours && local === undefined) {
        outdated.add(f.id);
        push(
          'deleted-remains',
          path,
          f,
          `an older copy of ${path}, which is deleted locally; it remains (the API has no delete)${statusNote(f)}`,
          {
            error: f.error,
          },
        );
      } else if (ours && path !== null && currentPaths.has(path) && (f.sha256 === null || f.sha256 !== local?.sha256)) {
        outdated.add(f.id);
        push(
          'stale-copy',
          path,
          f,
          `an older copy of ${path}, uploaded again since; it stays (the API has no delete or replace)${statusNote(f)}`,
          {
            error: f.error,
          },
        );
      } else {
        const same = local !== undefined && local.sha256 !== null && local.sha256 === f.sha256;
        push(
          'remote-untracked',
          same ? path : null,
          f,
          same
            ? `the state does not track this copy of ${path} (same content)`
            : 'the state does not know this file (uploaded by hand, by another tool or an older state)',
        );
      }
    }
    if (outdated.has(f.id)) continue;
    if (f.status === 'failed') {
      push('failed', localPathOf(f, mapName, multi), f, `the service failed to process it: ${f.error ?? 'no reason given'}`, {
        error: f.error,
      });
    } else if (f.status !== 'processed') {
      const since = f.updatedAt === null ? '' : `, last changed ${minutesAgo(f.updatedAt, input.now)}`;
      push('processing', localPathOf(f, mapName, multi), f, `still ${f.status}${since}`);
    }
  }

  const entries = input.entries === undefined ? null : auditEntries(input.entries);
  if (entries !== null) items.push(...entries.items);
  items.sort(
    (a, b) =>
      AUDIT_KINDS.indexOf(a.kind) - AUDIT_KINDS.indexOf(b.kind) ||
      cmp(a.path ?? '', b.path ?? '') ||
      cmp(a.remoteName ?? '', b.remoteName ?? '') ||
      Number(a.remoteId ?? 0) - Number(b.remoteId ?? 0),
  );
  const byKind = Object.fromEntries(AUDIT_KINDS.map((k) => [k, 0])) as Record<AuditKind, number>;
  for (const i of items) byKind[i.kind]++;
  return {
    kind: 'audit',
    auditedAt: input.now.toISOString(),
    summary: {
      local: input.observed.length,
      tracked: trackedCount,
      trackedDeleted: deletedCount,
      remote: input.listing.length,
      drift: items.length,
      byKind,
      ...(entries === null ? {} : { entries: { local: entries.local, tracked: entries.tracked, remote: entries.remote } }),
    },
    items,
  };
}

/** An outdated copy's processing status, when it is not `processed`: " (processing failed: parse_failed: ...)". */
function statusNote(f: AuditRemote): string {
  if (f.status === 'processed') return '';
  return f.status === 'failed' ? ` (processing failed: ${f.error ?? 'no reason given'})` : ` (still ${f.status})`;
}

function localPathOf(f: AuditRemote, mapName: ReturnType<typeof remoteNameMapper>, multi: boolean): string | null {
  const mapped = mapName(f.name);
  return mapped === null ? null : planPath(mapped.source, mapped.path, multi);
}

function short(sha: string): string {
  return sha.slice(0, 8);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function minutesAgo(iso: string, now: Date): string {
  const ms = now.getTime() - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const minutes = Math.max(0, Math.round(ms / 60_000));
  return minutes < 1 ? 'under a minute ago' : minutes < 120 ? `${minutes} min ago` : `${Math.round(minutes / 60)} h ago`;
}
