import { planPath } from '../shared/plan-path.js';
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
  /**
   * `path`, or `source/path` with several sources; several when files of the same content share one
   * copy (a current copy names only the paths that still exist); the remote name of an untracked copy.
   */
  names: string[];
  /** The same paths as `source/path` whatever the number of sources (an expected path may be written so). */
  sourcePaths: string[];
  /** The name the service stores it under, when known. */
  remoteName: string | null;
};

type Named = { name: string; sourcePath: string; deleted: boolean };

/**
 * Builds the lookup from a knowledge-source id (a query or chat result's `knowledgeSourceId`) to the
 * paths it stands for: from the tracked rows (remote id → source/path), then from the remote listing
 * for copies the state no longer tracks (their name → source/path). `currentPaths` holds every path of
 * a current copy, in both spellings.
 *
 * `kbsync check` uses it: it needs every tracked path and the kind of each copy. `query` and `chat`
 * name their few results with cli/source-names.ts instead: one state query for just those ids
 * (intelligence entries included) and the listing only for an id the state does not know.
 */
export function sourceIndex(input: {
  tracked: Iterable<TrackedFile>;
  listing: readonly RemoteCopy[] | null;
  sourceNames: readonly string[];
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
    byId.set(id, { id, copy, names: shown.map((p) => p.name), sourcePaths: shown.map((p) => p.sourcePath), remoteName });
  }
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
    });
  }
  return {
    refOf: (id) => byId.get(id) ?? { id, copy: 'unknown', names: [], sourcePaths: [], remoteName: null },
    currentPaths,
  };
}
