import type { KnowledgeClient, QueryResult } from '../client/index.js';
import type { Logger } from '../shared/logger.js';
import { planPath } from '../shared/plan-path.js';
import type { StateStore } from '../sync/state/index.js';
import { printable } from '../shared/printable.js';

/**
 * A query or chat result with what it came from: `path` as `plan` prints it (`source/path` when the
 * config has several sources, else the path; `source/file#key` for an intelligence entry) for a copy
 * or an entry the state tracks, else the service's file name, else null (an entry the state did not
 * write, a file neither knows); `source` is the config's source name when the state knows it, else null.
 */
export type NamedResult = QueryResult & { source: string | null; path: string | null };

/**
 * Names each result's source: the state first (remote id → source and path, one state query for these
 * ids), then, for ids it does not know, the service's free file listing. A failed listing leaves those
 * names null: the answer was paid for and is printed whatever the naming finds. (`kbsync check` builds
 * the full index of sync/source-index.ts instead: every tracked path and the kind of each copy, which
 * naming a few results does not need.)
 */
export async function nameResults(
  results: readonly QueryResult[],
  o: { state: StateStore; sourceNames: readonly string[]; client: KnowledgeClient; logger: Logger },
): Promise<NamedResult[]> {
  const ids = results.map((r) => r.knowledgeSourceId);
  const origins = o.state.originsOfRemoteIds(ids);
  const multiSource = o.sourceNames.length > 1;
  const remoteNames = new Map<string, string>();
  if (ids.some((id) => !origins.has(id))) {
    try {
      for (const file of await o.client.listAllFiles()) remoteNames.set(file.id, file.name);
    } catch (err) {
      o.logger.warn({ err }, 'could not list the remote files to name the results; they keep their ids');
    }
  }
  return results.map((r) => {
    const origin = origins.get(r.knowledgeSourceId);
    if (origin !== undefined) {
      // An intelligence entry reads as the plan prints it: always `source/file#key`.
      return { ...r, source: origin.source, path: planPath(origin.source, origin.path, multiSource || origin.entry === true) };
    }
    return { ...r, source: null, path: remoteNames.get(r.knowledgeSourceId) ?? null };
  });
}

/** How a result's source reads for people: its path, else `source ID`; with its chunk. */
export function sourceLabel(r: NamedResult): string {
  return `${r.path === null ? `source ${r.knowledgeSourceId}` : printable(r.path)} chunk ${r.chunkIndex}`;
}
