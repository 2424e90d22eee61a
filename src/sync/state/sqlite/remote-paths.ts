import type { Database } from 'better-sqlite3';
import type { TrackedOrigin } from '../state-types.js';

/**
 * The tracked files behind remote ids, for naming the results of `query` and `chat`. files.remote_id has
 * no index (it would cost every tracked file bytes for a rare lookup): one scan answers every id at once,
 * tens of ms at 100k files. When two rows share a remote id (a duplicate recorded against another file's
 * copy), the row the copy was named after wins (remote_name NULL or "/", see codec.ts), then the first by
 * source and path.
 */
export function createRemotePaths(db: Database) {
  const select = db.prepare<[string], { remote_id: string; source: string; path: string }>(
    `SELECT f.remote_id, s.name AS source, f.path
       FROM files f JOIN sources s ON s.id = f.source_id
      WHERE f.remote_id IN (SELECT value FROM json_each(?))
      ORDER BY (f.remote_name IS NULL OR f.remote_name = '/') DESC, s.name, f.path`,
  );
  // Files and intelligence entries share the service's knowledge-source ids: an id is one or the other.
  const selectEntries = db.prepare<[string], { remote_id: string; source: string; path: string }>(
    `SELECT e.remote_id, s.name AS source, e.path
       FROM intel_entries e JOIN sources s ON s.id = e.source_id
      WHERE e.path IS NOT NULL AND e.remote_id IN (SELECT value FROM json_each(?))`,
  );
  return {
    /** The tracked file (or intelligence entry) each of `remoteIds` came from; ids the state does not hold are absent. */
    originsOfRemoteIds(remoteIds: readonly string[]): Map<string, TrackedOrigin> {
      const found = new Map<string, TrackedOrigin>();
      if (remoteIds.length === 0) return found;
      for (const r of select.all(JSON.stringify([...new Set(remoteIds)]))) {
        if (!found.has(r.remote_id)) found.set(r.remote_id, { source: r.source, path: r.path });
      }
      const rest = remoteIds.filter((id) => !found.has(id));
      if (rest.length > 0) {
        for (const r of selectEntries.all(JSON.stringify([...new Set(rest)]))) {
          if (!found.has(r.remote_id)) found.set(r.remote_id, { source: r.source, path: r.path, entry: true });
        }
      }
      return found;
    },
  };
}
