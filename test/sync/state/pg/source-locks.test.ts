import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../../../src/shared/errors.js';
import { openState } from '../../../../src/sync/state/index.js';
import type { StateStore } from '../../../../src/sync/state/index.js';
import { freshDatabase } from '../../../helpers/postgres.js';

/**
 * Two source names whose 32-bit hashtext (the old lock key) is the same: a birthday search over
 * 300,000 names in PostgreSQL itself (about ten colliding pairs are expected; hashtext is deterministic).
 */
async function collidingNames(url: string): Promise<[string, string]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ a: string; b: string; ha: number; hb: number }>(
      `SELECT a, b, hashtext(a) AS ha, hashtext(b) AS hb FROM (
         SELECT min(n) AS a, max(n) AS b FROM (SELECT 'src-' || i AS n FROM generate_series(1, 300000) i) t
         GROUP BY hashtext(n) HAVING count(*) > 1 ORDER BY 1 LIMIT 1) pair`,
    );
    const pair = rows[0];
    if (pair === undefined) throw new Error('no colliding pair among 300,000 names');
    expect(pair.a).not.toBe(pair.b);
    expect(pair.ha).toBe(pair.hb);
    return [pair.a, pair.b];
  } finally {
    await client.end();
  }
}

const open: StateStore[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

describe('per-source writer locks on a PostgreSQL state', () => {
  it('let two runners hold two sources whose 32-bit name hashes collide; the same name is still refused, and freed on close', async () => {
    const url = await freshDatabase('source_locks');
    const [a, b] = await collidingNames(url);
    const first = openState(url, { scope: a });
    open.push(first);
    // Before: the second runner waited 3 s on the first one's lock, then was refused with state_locked.
    const second = openState(url, { scope: b });
    open.push(second);
    let refused: unknown = null;
    try {
      open.push(openState(url, { scope: `other,${a}` }));
    } catch (err) {
      refused = err;
    }
    expect(isKbsyncError(refused) && refused.code).toBe('state_locked');
    expect((refused as Error).message).toContain(`the source "${a}" is being synced by runner #`);
    first.close();
    // Released with the session; "other" (taken before the refusal) was released too.
    open.push(openState(url, { scope: `other,${a}` }));
  }, 60_000);
});
