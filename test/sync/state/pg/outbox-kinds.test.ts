import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../../src/sync/state/index.js';
import { freshDatabase } from '../../../helpers/postgres.js';

describe('the PostgreSQL outbox', () => {
  it('has no CHECK on the op kind once migrated: a new paid kind needs no schema step', async () => {
    const url = await freshDatabase('outbox_kinds');
    openState(url).close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ def: string }>(
        `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'outbox'::regclass AND contype = 'c'`,
      );
      const defs = rows.map((r) => r.def);
      expect(defs.some((d) => d.includes('state'))).toBe(true);
      expect(defs.filter((d) => d.includes('(kind ='))).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
