import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../../src/sync/state/index.js';
import type { PgStateStore } from '../../../../src/sync/state/pg/index.js';
import { freshDatabase } from '../../../helpers/postgres.js';

const HOUR = 3600 * 1000;
const T0 = Date.parse('2026-03-01T00:00:00.000Z');

/** The runners table as PostgreSQL has it: id and scope of each row, by id. */
async function runnerRows(url: string): Promise<{ id: number; scope: string }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ id: string; scope: string }>('SELECT id, scope FROM runners ORDER BY id')).rows.map((r) => ({
      id: Number(r.id),
      scope: r.scope,
    }));
  } finally {
    await client.end();
  }
}

/** Opens a runner of `scope` whose clock reads `at`, runs one sync, and returns it (open) with its run's id. */
function runnerWithRun(url: string, scope: string, at: number): { store: PgStateStore; runId: number } {
  const store = openState(url, { scope, now: () => new Date(at) }) as PgStateStore;
  const runId = store.startRun('sync');
  store.finishRun(runId, 'done', { n: 1 });
  return { store, runId };
}

describe('runner rows on a PostgreSQL state', () => {
  it('are folded into the next runner of the same sources once gone for a day; other sources and recent ones stay', async () => {
    const url = await freshDatabase('runners_prune');
    const a = runnerWithRun(url, 'docs', T0);
    a.store.close();
    const c = runnerWithRun(url, 'other', T0);
    c.store.close();
    // An hour later: A is dead but was seen too recently to go.
    const b = runnerWithRun(url, 'docs', T0 + HOUR);
    b.store.close();
    const [ra, rc, rb] = await runnerRows(url);
    expect([ra?.scope, rc?.scope, rb?.scope]).toEqual(['docs', 'other', 'docs']);

    // Two days on: A and B, dead and unseen for over a day, go; their runs are the new runner's.
    const d = openState(url, { scope: 'docs', now: () => new Date(T0 + 48 * HOUR) }) as PgStateStore;
    try {
      const rows = await runnerRows(url);
      expect(rows.map((r) => r.scope)).toEqual(['other', 'docs']);
      expect(rows[0]?.id).toBe(rc?.id);
      const me = rows[1]?.id;
      expect(d.lastRun()?.id).toBe(b.runId);
      expect(d.getRun(a.runId)?.status).toBe('done');
      const listed = d.runners();
      expect(listed.find((r) => r.id === me)).toMatchObject({ scope: 'docs', runs: 2, alive: true });
      expect(listed.map((r) => r.id)).toEqual([me, rc?.id]);
    } finally {
      d.close();
    }
  }, 60_000);

  it('are folded after a run by a runner that has been open for long (a daemon)', async () => {
    const url = await freshDatabase('runners_prune_daemon');
    let clock = T0;
    // Runners without sources take no source lock: two can be open at once.
    const daemon = openState(url, { scope: '', now: () => new Date(clock) }) as PgStateStore;
    try {
      const other = runnerWithRun(url, '', T0);
      other.store.close();
      expect((await runnerRows(url)).length).toBe(2);
      clock = T0 + 25 * HOUR;
      const run = daemon.startRun('watch');
      daemon.finishRun(run, 'done', null);
      const rows = await runnerRows(url);
      expect(rows.length).toBe(1);
      expect(daemon.getRun(other.runId)?.status).toBe('done');
      expect(daemon.runners()).toMatchObject([{ id: rows[0]?.id, runs: 2 }]);
    } finally {
      daemon.close();
    }
  }, 60_000);
});
