import { remoteNameMapper } from '../executor/remote-names.js';
import { trackedKey } from '../tracked/keys.js';
import { planPath } from '../../shared/plan-path.js';
import type { TrackedIndex } from '../tracked/tracked-index.js';
import type { ObservedFile, SkippedPath } from '../types.js';
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
  /** Supported local files the walk listed, with their content hash (null: changing while hashed). */
  observed: readonly ObservedFile[];
  /**
   * 1 for each tracked row whose file the walk found with the row's fingerprint and did not list
   * (the plan's unlisted rows): there locally, with the row's content. Null: the walk listed every file.
   */
  counted?: Uint8Array | null;
  /** Paths the walk saw and left out (excluded, ignored...): a tracked one is not deleted locally. */
  skipped?: readonly SkippedPath[];
  tracked: TrackedIndex;
  /** The dataset's files, a page at a time (a file listed twice counts once). */
  listing: Iterable<readonly AuditRemote[]> | AsyncIterable<readonly AuditRemote[]>;
  sourceNames: readonly string[];
  /** Files over this size are never uploaded (the plan's limit): not counted as `not-uploaded`; nor are empty files. */
  maxFileBytes: number;
  now: Date;
  /** With intelligence sources: their records, the state's entries and the entry listing. */
  entries?: EntryAuditInput;
};

/** A tracked row's file found by the walk but not listed: see AuditInput.counted. */
const COUNTED = -2;
/** A tracked row whose file the walk did not find. */
const ABSENT = -1;

/**
 * The three-way comparison of the walk, the state and the remote listing. It holds a few numbers per
 * tracked row and one page of the listing at a time, and an object per finding: an audit of a
 * million files in step holds no object per file.
 */
export async function auditDataset(input: AuditInput): Promise<AuditReport> {
  const { tracked } = input;
  const multi = input.sourceNames.length > 1;
  const items: AuditItem[] = [];
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
  const local = localFiles(input);
  const rowPath = (row: number): string => planPath(tracked.sourceAt(row), tracked.pathAt(row), multi);
  /** The local content of a tracked row's file (null: changing while hashed), or undefined when the walk did not find it. */
  const localSha = (row: number): string | null | undefined => {
    const at = local.atRow[row] as number;
    return at === COUNTED ? tracked.sha256At(row) : at === ABSENT ? undefined : (input.observed[at] as ObservedFile).sha256;
  };
  const byId = rowsByRemoteId(tracked);
  const listedRows = new Uint8Array(tracked.size);
  const untrackedSeen = new Set<string>();
  const bySha = new Map<string, AuditRemote>();
  const mapName = remoteNameMapper(input.sourceNames);
  let leftOut: Map<string, SkippedPath> | null = null;
  let remoteCount = 0;

  /** A listed copy that tracked rows name: is each row's file there, and with the copy's content? Returns true when the copy is outdated. */
  const compareTracked = (f: AuditRemote, rows: readonly number[]): boolean => {
    let outdated = false;
    for (const row of rows) {
      listedRows[row] = 1;
      const sha = localSha(row);
      const path = rowPath(row);
      if (sha === undefined) {
        outdated = true;
        leftOut ??= new Map((input.skipped ?? []).map((k) => [trackedKey(k.source, k.path), k]));
        const skip = leftOut.get(trackedKey(tracked.sourceAt(row), tracked.pathAt(row)));
        const gone = skip === undefined ? 'deleted locally' : `left out of the sync (${skip.reason}: ${skip.detail})`;
        push('deleted-remains', path, f, `${gone}; its remote copy (id ${f.id}) remains (the API has no delete)${statusNote(f)}`, {
          error: f.error,
        });
        continue;
      }
      const had = tracked.sha256At(row);
      if (sha !== null && sha !== had) {
        push(
          'changed',
          path,
          f,
          `changed locally since its upload (sha256 ${short(had)} -> ${short(sha)}): the copy in the dataset is stale`,
        );
      } else if (f.sha256 !== null && f.sha256 !== had) {
        push('changed', path, f, `the dataset's copy has other content (sha256 ${short(f.sha256)}) than the one tracked (${short(had)})`);
      }
    }
    return outdated;
  };

  /** A listed copy no tracked row names: an older copy of one of ours, or a file the state does not know. Returns true when outdated. */
  const compareUntracked = (f: AuditRemote): boolean => {
    const mapped = mapName(f.name);
    const row = mapped === null ? -1 : tracked.rowOf(mapped.source, mapped.path);
    const path = mapped === null ? null : planPath(mapped.source, mapped.path, multi);
    const sha =
      row >= 0 ? localSha(row) : mapped === null ? undefined : local.untracked.get(trackedKey(mapped.source, mapped.path))?.sha256;
    if (row >= 0 && sha === undefined) {
      push(
        'deleted-remains',
        path,
        f,
        `an older copy of ${path}, which is deleted locally; it remains (the API has no delete)${statusNote(f)}`,
        {
          error: f.error,
        },
      );
      return true;
    }
    if (row >= 0 && (f.sha256 === null || f.sha256 !== sha)) {
      push(
        'stale-copy',
        path,
        f,
        `an older copy of ${path}, uploaded again since; it stays (the API has no delete or replace)${statusNote(f)}`,
        {
          error: f.error,
        },
      );
      return true;
    }
    const same = sha !== undefined && sha !== null && sha === f.sha256;
    push(
      'remote-untracked',
      same ? path : null,
      f,
      same
        ? `the state does not track this copy of ${path} (same content)`
        : 'the state does not know this file (uploaded by hand, by another tool or an older state)',
    );
    return false;
  };

  for await (const page of input.listing) {
    for (const f of page) {
      const rows = byId.rowsOf(f.id);
      if (rows !== undefined ? listedRows[rows[0] as number] === 1 : untrackedSeen.has(f.id)) continue;
      if (rows === undefined) untrackedSeen.add(f.id);
      remoteCount++;
      if (f.sha256 !== null && local.wantedSha.has(f.sha256) && !bySha.has(f.sha256)) bySha.set(f.sha256, f);
      const outdated = rows !== undefined ? compareTracked(f, rows) : compareUntracked(f);
      if (outdated) continue;
      if (f.status === 'failed') {
        push('failed', localPathOf(f, mapName, multi), f, `the service failed to process it: ${f.error ?? 'no reason given'}`, {
          error: f.error,
        });
      } else if (f.status !== 'processed') {
        const since = f.updatedAt === null ? '' : `, last changed ${minutesAgo(f.updatedAt, input.now)}`;
        push('processing', localPathOf(f, mapName, multi), f, `still ${f.status}${since}`);
      }
    }
  }

  let trackedCount = 0;
  let deletedCount = 0;
  for (let row = 0; row < tracked.size; row++) {
    if (tracked.deletedAt(row)) deletedCount++;
    else trackedCount++;
    const remoteId = tracked.remoteIdAt(row);
    if (remoteId === null || listedRows[row] === 1 || local.atRow[row] === ABSENT) continue;
    push('missing-remote', rowPath(row), null, `tracked as remote id ${remoteId}, which the dataset does not list`, {
      remoteId,
      remoteName: tracked.remoteNameAt(row),
    });
  }
  for (const f of local.untracked.values()) {
    // Over the size limit or empty (skip:empty): a sync never uploads it.
    if (f.size > input.maxFileBytes || f.size === 0) continue;
    // A moved file or a copy of another: its content is in the dataset already, and a sync records it for free.
    const held = f.sha256 === null ? undefined : bySha.get(f.sha256);
    const detail =
      held === undefined
        ? 'not in the dataset yet (a sync uploads it)'
        : `not tracked; its content is in the dataset as ${held.name} (id ${held.id}): a sync records it without an upload`;
    push('not-uploaded', planPath(f.source, f.path, multi), null, detail);
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
      local: input.observed.length + local.counted,
      tracked: trackedCount,
      trackedDeleted: deletedCount,
      remote: remoteCount,
      drift: items.length,
      byKind,
      ...(entries === null ? {} : { entries: { local: entries.local, tracked: entries.tracked, remote: entries.remote } }),
    },
    items,
  };
}

/**
 * Where each tracked row's file is in the walk (an index into `observed`, COUNTED or ABSENT), the
 * files the walk found that no row tracks, and the contents a listed copy may already hold for them.
 */
function localFiles(input: AuditInput): {
  atRow: Int32Array;
  untracked: Map<string, ObservedFile>;
  wantedSha: Set<string>;
  counted: number;
} {
  const { tracked, counted } = input;
  if (counted != null && counted.length !== tracked.size)
    throw new Error(`audit: ${counted.length} counted flags for ${tracked.size} tracked rows`);
  const atRow = new Int32Array(tracked.size).fill(ABSENT);
  let countedRows = 0;
  if (counted != null)
    for (let row = 0; row < counted.length; row++)
      if (counted[row] === 1) {
        atRow[row] = COUNTED;
        countedRows++;
      }
  const untracked = new Map<string, ObservedFile>();
  const wantedSha = new Set<string>();
  input.observed.forEach((f, at) => {
    const row = tracked.rowOf(f.source, f.path);
    if (row >= 0) {
      atRow[row] = at;
      return;
    }
    untracked.set(trackedKey(f.source, f.path), f);
    if (f.sha256 !== null) wantedSha.add(f.sha256);
  });
  return { atRow, untracked, wantedSha, counted: countedRows };
}

/**
 * The tracked rows naming each remote id, found by a binary search over the rows sorted by id: 4
 * bytes a row, where a Map of a million ids costs some 60 MB. Several paths may share one copy (of
 * the same content): rowsOf gives them all, in row order.
 */
function rowsByRemoteId(tracked: TrackedIndex): { rowsOf(id: string): number[] | undefined } {
  let n = 0;
  for (let row = 0; row < tracked.size; row++) if (tracked.remoteIdAt(row) !== null) n++;
  const order = new Int32Array(n);
  for (let row = 0, at = 0; row < tracked.size; row++) if (tracked.remoteIdAt(row) !== null) order[at++] = row;
  // The ids are read from the index each time, not copied: a copy would cost a pointer a row more.
  const idAt = (row: number): string => tracked.remoteIdAt(row) as string;
  const idOf = (i: number): string => idAt(order[i] as number);
  order.sort((a, b) => cmp(idAt(a), idAt(b)) || a - b);
  return {
    rowsOf(id) {
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (idOf(mid) < id) lo = mid + 1;
        else hi = mid;
      }
      if (lo === n || idOf(lo) !== id) return undefined;
      const rows: number[] = [];
      for (let i = lo; i < n && idOf(i) === id; i++) rows.push(order[i] as number);
      return rows;
    },
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
