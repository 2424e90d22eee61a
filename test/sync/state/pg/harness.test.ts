import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../../../helpers/postgres.js';

describe('the test PostgreSQL server', () => {
  it('is a real PostgreSQL 18 the tests started, one database per ask', async () => {
    const a = await freshDatabase('harness');
    const b = await freshDatabase('harness');
    expect(a).not.toBe(b);
    const client = new pg.Client({ connectionString: a });
    await client.connect();
    try {
      const { rows } = await client.query<{ v: string; db: string }>('SELECT current_setting($1) AS v, current_database() AS db', [
        'server_version_num',
      ]);
      expect(Number(rows[0]?.v)).toBeGreaterThanOrEqual(180000);
      expect(a.endsWith(`/${rows[0]?.db}`)).toBe(true);
    } finally {
      await client.end();
    }
  });
});
