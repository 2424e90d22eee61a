import type { Database } from 'better-sqlite3';
import { REMOTE_CHECK_KEY } from './migrations.js';

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
    /**
     * True while the state has not been matched against the dataset's listing (created empty, by this
     * kbsync or by another command, and not rebuilt since): the next listing must rebuild it.
     */
    remoteCheckPending(): boolean {
      return get.get(REMOTE_CHECK_KEY) !== undefined;
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
