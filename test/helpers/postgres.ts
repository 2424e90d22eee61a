import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

let base: Promise<string> | undefined;

/** The base URL (no database) of the run's one PostgreSQL server, started on first use (test/helpers/postgres-global.ts). */
export function postgresServer(): Promise<string> {
  base ??= (async () => {
    const res = await fetch(inject('postgresBroker'));
    const text = await res.text();
    if (!res.ok) throw new Error(`the test PostgreSQL server did not start: ${text}`);
    return text;
  })();
  return base;
}

/**
 * A new, empty database on the run's PostgreSQL server, named after `label` plus a random suffix (each
 * test file, or each test that wants one, gets its own); returns its URL.
 */
export async function freshDatabase(label: string): Promise<string> {
  const server = await postgresServer();
  const name = `${label.toLowerCase().replace(/[^a-z0-9]+/g, '_')}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  return `${server}/${name}`;
}
