import type { Db } from './db.js';

const commitKey = (source: string): string => `git.last_commit.${source}`;

/** The `meta` key/value table on PostgreSQL (sqlite/meta.ts is the SQLite one). */
export function createPgMeta(db: Db) {
  const get = async (key: string): Promise<string | null> =>
    (await db.q<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key]))[0]?.value ?? null;
  const set = async (key: string, value: string | null): Promise<void> => {
    if (value === null) await db.run('DELETE FROM meta WHERE key = $1', [key]);
    else await db.run('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  };
  return {
    getMeta: get,
    setMeta: set,
    remoteCheckPending: async (): Promise<boolean> => (await get('remote_check')) !== null,
    async lastSyncedCommit(source: string, scope: string): Promise<string | null> {
      const value = await get(commitKey(source));
      if (value === null || !value.startsWith('{')) return null;
      const stored = JSON.parse(value) as { commit?: unknown; scope?: unknown };
      return stored.scope === scope && typeof stored.commit === 'string' ? stored.commit : null;
    },
    setLastSyncedCommit: (source: string, commit: string, scope: string): Promise<void> =>
      set(commitKey(source), JSON.stringify({ commit, scope })),
  };
}
