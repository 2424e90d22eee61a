import type { Db } from './db.js';

/** Interned source names (as sqlite/sources.ts does for SQLite), cached: ids never change once given. */
export type PgSources = {
  idOf(name: string): Promise<number>;
  findId(name: string): Promise<number | undefined>;
  nameOf(id: number): Promise<string>;
};

/** Source-name interning over the shared `sources` table. */
export function createPgSources(db: Db): PgSources {
  const byName = new Map<string, number>();
  const byId = new Map<number, string>();
  const remember = (id: number, name: string): number => {
    byName.set(name, id);
    byId.set(id, name);
    return id;
  };
  const findId = async (name: string): Promise<number | undefined> => {
    const cached = byName.get(name);
    if (cached !== undefined) return cached;
    const rows = await db.q<{ id: number }>('SELECT id FROM sources WHERE name = $1', [name]);
    return rows[0] === undefined ? undefined : remember(rows[0].id, name);
  };
  return {
    findId,
    async idOf(name) {
      const found = await findId(name);
      if (found !== undefined) return found;
      await db.run('INSERT INTO sources (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [name]);
      const id = await findId(name);
      if (id === undefined) throw new Error(`source ${name} could not be interned`);
      return id;
    },
    async nameOf(id) {
      const cached = byId.get(id);
      if (cached !== undefined) return cached;
      const rows = await db.q<{ name: string }>('SELECT name FROM sources WHERE id = $1', [id]);
      if (rows[0] === undefined) throw new Error(`no source with id ${id}`);
      return rows[0].name;
    },
  };
}
