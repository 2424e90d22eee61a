import type { Database } from 'better-sqlite3';
import { pidAlive } from '../../shared/pid-alive.js';

/*
 * Several services may work on one data folder at once: the embedded target runs one in each kbsync
 * process (a daemon's, and each command's beside it). What a service holds while it works (an upload's
 * temp folder and idempotency key, a file it processes, the chunks it writes) carries its instance id,
 * and a start repairs only what an instance that no longer runs left behind.
 */

const owners = new WeakMap<Database, string>();

/** A new instance id: `<pid>-<random>`, this process's pid first (see instanceAlive). */
export function newInstanceId(): string {
  return `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Marks what `db` writes from now on (claims, keys, generations) as `instance`'s. */
export function bindOwner(db: Database, instance: string): void {
  owners.set(db, instance);
}

/** The instance whose work `db` writes, or null (an admin command's or a test's connection: anyone may repair what it leaves). */
export function ownerOf(db: Database): string | null {
  return owners.get(db) ?? null;
}

/**
 * True while the instance may still run: its process is alive. A WAL database is shared by the
 * processes of one host only, so a pid tells. Null or another form of id: nobody's, so not alive.
 */
export function instanceAlive(instance: string | null): boolean {
  const pid = /^([1-9]\d*)-[0-9a-z]+$/.exec(instance ?? '')?.[1];
  return pid !== undefined && pidAlive(Number(pid));
}

/**
 * The owners in `column` of `table`'s rows matching `where` whose instance no longer runs, as a JSON
 * array for `IN (SELECT value FROM json_each(?))` (null owners are matched apart, with `IS NULL`).
 */
export function deadOwners(db: Database, table: string, column: string, where: string): string {
  const found = db.prepare(`SELECT DISTINCT ${column} FROM ${table} WHERE ${where} AND ${column} IS NOT NULL`).pluck().all() as string[];
  return JSON.stringify(found.filter((o) => !instanceAlive(o)));
}
