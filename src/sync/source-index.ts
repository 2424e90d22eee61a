import { remoteNameMapper } from './executor/remote-names.js';
import type { RemoteCopy, TrackedFile } from './types.js';

/**
 * What a knowledge-source id of a query result is, as far as the state and the remote listing say:
 * - `current`: the copy the state tracks for a path that still exists;
 * - `deleted`: the copy of a path deleted locally (it stays: the API has no delete);
 * - `stale`: an older copy of a path whose content was uploaded again since (in the listing, not tracked);
 * - `untracked`: in the listing under a name that is none of ours (uploaded by hand, another tool);
 * - `unknown`: neither tracked nor listed (an intelligence entry, or a file of a listing not fetched).
 */
export type CopyKind = 'current' | 'deleted' | 'stale' | 'untracked' | 'unknown';

/** A knowledge-source id named for people: the paths it stands for, as `kbsync plan` prints them. */
export type SourceRef = {
  id: string;
  copy: CopyKind;
  /** `path`, or `source/path` with several sources; several when files of the same content share one copy. */
  names: string[];
  /** The name the service stores it under, when known. */
  remoteName: string | null;
};

/** The path as `kbsync plan` prints it: `source/path` with several sources, else `path`. */
export function planPath(source: string, path: string, multiSource: boolean): string {
  return multiSource ? `${source}/${path}` : path;
}

/**
 * Builds the lookup from a knowledge-source id (a query or chat result's `knowledgeSourceId`) to the
 * paths it stands for: from the tracked rows (remote id → source/path), then from the remote listing
 * for copies the state no longer tracks (their name → source/path).
 */
export function sourceIndex(input: {
  tracked: Iterable<TrackedFile>;
  listing: readonly RemoteCopy[] | null;
  sourceNames: readonly string[];
}): { refOf(id: string): SourceRef; currentPaths: ReadonlySet<string> } {
  const multi = input.sourceNames.length > 1;
  const byId = new Map<string, SourceRef>();
  const currentPaths = new Set<string>();
  const deletedPaths = new Set<string>();
  for (const t of input.tracked) {
    if (t.remoteId === null) continue;
    const name = planPath(t.source, t.path, multi);
    const deleted = t.lastAction === 'deleted';
    if (deleted) deletedPaths.add(name);
    else currentPaths.add(name);
    const ref = byId.get(t.remoteId);
    if (ref === undefined) {
      byId.set(t.remoteId, { id: t.remoteId, copy: deleted ? 'deleted' : 'current', names: [name], remoteName: t.remoteName });
    } else {
      ref.names.push(name);
      // One path still here makes the copy current for it; a copy is `deleted` only when all its paths are.
      if (!deleted) ref.copy = 'current';
    }
  }
  const mapName = remoteNameMapper(input.sourceNames);
  for (const f of input.listing ?? []) {
    if (byId.has(f.id)) continue;
    const mapped = mapName(f.name);
    const name = mapped === null ? null : planPath(mapped.source, mapped.path, multi);
    const copy: CopyKind =
      name === null ? 'untracked' : currentPaths.has(name) ? 'stale' : deletedPaths.has(name) ? 'deleted' : 'untracked';
    byId.set(f.id, { id: f.id, copy, names: name === null || copy === 'untracked' ? [f.name] : [name], remoteName: f.name });
  }
  return {
    refOf: (id) => byId.get(id) ?? { id, copy: 'unknown', names: [], remoteName: null },
    currentPaths,
  };
}
