import type { Database } from 'better-sqlite3';

export type Meta = ReturnType<typeof createMeta>;

const commitKey = (source: string): string => `git.last_commit.${source}`;

/** The `meta` key/value table (schema facts, rebuild marks, per-git-source last synced commit). */
export function createMeta(db: Database) {
  const get = db.prepare<[string], string>('SELECT value FROM meta WHERE key = ?').pluck();
  const set = db.prepare<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const del = db.prepare<[string]>('DELETE FROM meta WHERE key = ?');
  return {
    /** The value of a meta key, or null. */
    getMeta(key: string): string | null {
      return get.get(key) ?? null;
    },
    /** Sets (or with null, deletes) a meta key. */
    setMeta(key: string, value: string | null): void {
      if (value === null) del.run(key);
      else set.run(key, value);
    },
    /** The last commit synced from a git source, or null. */
    lastSyncedCommit(source: string): string | null {
      return get.get(commitKey(source)) ?? null;
    },
    /** Records the commit a git source was fully synced at. */
    setLastSyncedCommit(source: string, commit: string): void {
      set.run(commitKey(source), commit);
    },
  };
}
