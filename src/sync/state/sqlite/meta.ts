import type { Database } from 'better-sqlite3';
import { REMOTE_CHECK_KEY } from './schema.js';

export type Meta = ReturnType<typeof createMeta>;

const commitKey = (source: string): string => `git.last_commit.${source}`;

/** The `meta` key/value table (schema facts, rebuild marks, per-git-source last synced commit). */
export function createMeta(db: Database) {
  const get = db.prepare<[string], string>('SELECT value FROM meta WHERE key = ?').pluck();
  const set = db.prepare<[string, string]>(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  );
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
    /**
     * True while the state has not been matched against the dataset's listing (created empty, by this
     * kbsync or by another command, and not rebuilt since): the next listing must rebuild it.
     */
    remoteCheckPending(): boolean {
      return get.get(REMOTE_CHECK_KEY) !== undefined;
    },
    /**
     * The last commit synced from a git source, or null: also null when it was synced with another
     * `scope` (its url and subdir), whose paths were other files, or by a kbsync that kept no scope.
     */
    lastSyncedCommit(source: string, scope: string): string | null {
      const value = get.get(commitKey(source));
      if (value === undefined || !value.startsWith('{')) return null;
      const stored = JSON.parse(value) as { commit?: unknown; scope?: unknown };
      return stored.scope === scope && typeof stored.commit === 'string' ? stored.commit : null;
    },
    /** Records the commit a git source was fully synced at, with the scope (url and subdir) it was synced with. */
    setLastSyncedCommit(source: string, commit: string, scope: string): void {
      set.run(commitKey(source), JSON.stringify({ commit, scope }));
    },
  };
}
