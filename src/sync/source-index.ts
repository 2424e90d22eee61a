import { planPath } from '../shared/plan-path.js';
import { remoteNameMapper } from './executor/remote-names.js';
import type { TrackedEntry } from './state/index.js';
import type { RemoteCopy, TrackedFile } from './types.js';

/**
 * What a knowledge-source id of a query result is, as far as the state and the remote listing say:
 * - `current`: the copy the state tracks for a path that still exists;
 * - `deleted`: the copy of a path deleted locally (it stays: the API has no delete);
 * - `stale`: an older copy of a path whose content was uploaded again since (in the listing, not tracked);
 * - `untracked`: in the listing under a name that is none of ours (uploaded by hand, another tool);
 * - `unknown`: neither tracked nor listed (an entry the state did not write, or a file of a listing not fetched).
 *
 * An intelligence entry the state tracks is `current` when a record of the entry files holds its
 * content now, `stale` when the record it was written from holds other content since, `deleted` when
 * that record is gone.
 */
export type CopyKind = 'current' | 'deleted' | 'stale' | 'untracked' | 'unknown';

/** A knowledge-source id named for people: the paths it stands for, as `kbsync plan` prints them. */
export type SourceRef = {
  id: string;
  copy: CopyKind;
  /**
   * `path`, or `source/path` with several sources; several when files of the same content share one
   * copy (a current copy names only the paths that still exist); the remote name of an untracked copy.
   */
  names: string[];
  /**
   * The same paths as `source/path` whatever the number of sources (an expected path may be written so);
   * for an intelligence entry, `source/file#key` and `file#key` (as `kbsync explain` takes it).
   */
  sourcePaths: string[];
  /** True for an intelligence entry (its paths are `file#key`). */
  entry: boolean;
  /** The name the service stores it under, when known. */
  remoteName: string | null;
};

type Named = { name: string; sourcePath: string; deleted: boolean };

/** An intelligence entry read from the entry files now: where it is, and the SHA-256 of its content. */
export type EntryRecordRef = { source: string; path: string; sha256: string };

/**
 * Builds the lookup from a knowledge-source id (a query or chat result's `knowledgeSourceId`) to the
 * paths it stands for: from the tracked rows (remote id → source/path), then from the remote listing
 * for copies the state no longer tracks (their name → source/path). `currentPaths` holds every path of
 * a current copy, in both spellings. With `entries` (the records of the intelligence sources, and the
 * entries the state tracks by content), the ids of entries are named too (`source/file#key`), and
 * `currentPaths` holds each current entry and its entry file, in each spelling.
 *
 * `kbsync check` uses it: it needs every tracked path and the kind of each copy. `query` and `chat`
 * name their few results with cli/source-names.ts instead: one state query for just those ids
 * (intelligence entries included) and the listing only for an id the state does not know.
 */
export function sourceIndex(input: {
  tracked: Iterable<TrackedFile>;
  listing: readonly RemoteCopy[] | null;
  sourceNames: readonly string[];
  entries?: { records: Iterable<EntryRecordRef>; tracked: ReadonlyMap<string, TrackedEntry> };
}): { refOf(id: string): SourceRef; currentPaths: ReadonlySet<string> } {
  const multi = input.sourceNames.length > 1;
  const tracked = new Map<string, { remoteName: string; paths: Named[] }>();
  const currentPaths = new Set<string>();
  const deletedPaths = new Set<string>();
  for (const t of input.tracked) {
    if (t.remoteId === null) continue;
    const named: Named = {
      name: planPath(t.source, t.path, multi),
      sourcePath: `${t.source}/${t.path}`,
      deleted: t.lastAction === 'deleted',
    };
    const paths = named.deleted ? deletedPaths : currentPaths;
    paths.add(named.name).add(named.sourcePath);
    const entry = tracked.get(t.remoteId);
    if (entry === undefined) tracked.set(t.remoteId, { remoteName: t.remoteName, paths: [named] });
    else entry.paths.push(named);
  }
  const byId = new Map<string, SourceRef>();
  for (const [id, { remoteName, paths }] of tracked) {
    // One path still here makes the copy current for it; a copy is `deleted` only when all its paths are.
    const live = paths.filter((p) => !p.deleted);
    const shown = live.length > 0 ? live : paths;
    const copy: CopyKind = live.length > 0 ? 'current' : 'deleted';
    byId.set(id, { id, copy, names: shown.map((p) => p.name), sourcePaths: shown.map((p) => p.sourcePath), remoteName, entry: false });
  }
  if (input.entries !== undefined) addEntries(byId, currentPaths, input.entries);
  const mapName = remoteNameMapper(input.sourceNames);
  for (const f of input.listing ?? []) {
    if (byId.has(f.id)) continue;
    const mapped = mapName(f.name);
    const name = mapped === null ? null : planPath(mapped.source, mapped.path, multi);
    const copy: CopyKind =
      name === null ? 'untracked' : currentPaths.has(name) ? 'stale' : deletedPaths.has(name) ? 'deleted' : 'untracked';
    const ours = mapped !== null && name !== null && copy !== 'untracked';
    byId.set(f.id, {
      id: f.id,
      copy,
      names: ours ? [name] : [f.name],
      sourcePaths: ours ? [`${mapped.source}/${mapped.path}`] : [],
      remoteName: f.name,
      entry: false,
    });
  }
  return {
    refOf: (id) => byId.get(id) ?? { id, copy: 'unknown', names: [], sourcePaths: [], remoteName: null, entry: false },
    currentPaths,
  };
}

/**
 * Names the entries the state tracks (entry id → `source/file#key`, always with its source, as `plan`
 * prints entries): by the records holding their content now (current), else by the record they were
 * written from (stale when it holds other content since, deleted when it is gone). An entry adopted
 * from the listing that no record holds has no path: it stays unknown.
 */
function addEntries(
  byId: Map<string, SourceRef>,
  currentPaths: Set<string>,
  entries: { records: Iterable<EntryRecordRef>; tracked: ReadonlyMap<string, TrackedEntry> },
): void {
  const bySha = new Map<string, EntryRecordRef[]>();
  const live = new Set<string>();
  for (const r of entries.records) {
    const list = bySha.get(r.sha256);
    if (list === undefined) bySha.set(r.sha256, [r]);
    else list.push(r);
    live.add(`${r.source}/${r.path}`);
  }
  for (const [sha, t] of entries.tracked) {
    if (t.remoteId === null || t.remoteId === '' || byId.has(t.remoteId)) continue;
    const now = bySha.get(sha);
    const at = now ?? (t.source === null || t.path === null ? [] : [{ source: t.source, path: t.path, sha256: sha }]);
    if (at.length === 0) continue;
    const copy: CopyKind = now !== undefined ? 'current' : live.has(`${t.source}/${t.path}`) ? 'stale' : 'deleted';
    const names = at.map((r) => `${r.source}/${r.path}`);
    byId.set(t.remoteId, {
      id: t.remoteId,
      copy,
      names,
      sourcePaths: [...names, ...at.map((r) => r.path)],
      remoteName: null,
      entry: true,
    });
    if (copy !== 'current') continue;
    for (const r of at) {
      const file = r.path.replace(/#[^#]*$/, '');
      currentPaths.add(`${r.source}/${r.path}`).add(r.path).add(`${r.source}/${file}`).add(file);
    }
  }
}
