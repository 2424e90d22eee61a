import type { Database } from 'better-sqlite3';

/** Interned source names: files and outbox rows store a small integer instead of the name. */
export type SourceIds = {
  /** The id of `name`, created on first use. */
  idOf(name: string): number;
  /** The id of `name`, or undefined when no row ever used it. */
  findId(name: string): number | undefined;
  /** The name of an id. */
  nameOf(id: number): string;
};

/** Source-name interning over the `sources` table, cached in memory (ids never change once given). */
export function createSourceIds(db: Database): SourceIds {
  const byName = new Map<string, number>();
  const byId = new Map<number, string>();
  const select = db.prepare<[string], { id: number }>('SELECT id FROM sources WHERE name = ?');
  const selectName = db.prepare<[number], { name: string }>('SELECT name FROM sources WHERE id = ?');
  const insert = db.prepare<[string]>('INSERT OR IGNORE INTO sources (name) VALUES (?)');

  const remember = (id: number, name: string): number => {
    byName.set(name, id);
    byId.set(id, name);
    return id;
  };
  const findId = (name: string): number | undefined => {
    const cached = byName.get(name);
    if (cached !== undefined) return cached;
    const row = select.get(name);
    return row === undefined ? undefined : remember(row.id, name);
  };
  return {
    findId,
    idOf(name) {
      const found = findId(name);
      if (found !== undefined) return found;
      insert.run(name);
      const id = findId(name);
      if (id === undefined) throw new Error(`source ${name} could not be interned`);
      return id;
    },
    nameOf(id) {
      const cached = byId.get(id);
      if (cached !== undefined) return cached;
      const row = selectName.get(id);
      if (row === undefined) throw new Error(`no source with id ${id}`);
      remember(id, row.name);
      return row.name;
    },
  };
}
