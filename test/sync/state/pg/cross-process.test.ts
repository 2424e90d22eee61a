import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PG_MIGRATIONS } from '../../../../src/sync/state/pg/schema.js';
import { openState } from '../../../../src/sync/state/index.js';
import type { PgStateStore } from '../../../../src/sync/state/pg/index.js';
import { printFigures } from '../../../helpers/figures.js';
import { freshDatabase } from '../../../helpers/postgres.js';
import { exited, firstMessage, forkTs } from '../fixtures/fork-ts.js';

type Caps = { run: number; day: number; month: number };
type Result = { admitted: number; refused: number; bought: string[]; reused: number };

/** Forks `n` runner processes on the state at `url`, waits until each is ready, starts them together. */
async function runners(url: string, n: number, mode: string, count: number, caps: Caps, runIds: number[] = []): Promise<Result[]> {
  const children = Array.from({ length: n }, (_, i) =>
    forkTs('./pg-runner.ts', [JSON.stringify({ url, mode, seed: i + 1, count, caps, scope: `src${i + 1}`, runIds })]),
  );
  await Promise.all(children.map((c) => firstMessage(c)));
  const results = children.map((c) => firstMessage<Result>(c));
  for (const c of children) c.send('go');
  const out = await Promise.all(results);
  expect(await Promise.all(children.map(exited))).toEqual(children.map(() => 0));
  return out;
}

describe('many processes on one PostgreSQL state', () => {
  it('never admit past a shared cap together; the ledger and the totals agree', async () => {
    const url = await freshDatabase('caps');
    const caps = { run: 1_000_000, day: 1_000_000, month: 200 };
    // The four open a database no one has opened before, at once: the schema is made once, at the newest version.
    const results = await runners(url, 4, 'reserve', 40, caps);
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      expect((await raw.query('SELECT version FROM kbsync_schema')).rows).toEqual([{ version: PG_MIGRATIONS.length }]);
    } finally {
      await raw.end();
    }
    const view = openState(url, { lock: false });
    try {
      const used = view.creditsUsed(null);
      expect(used.month).toBeLessThanOrEqual(caps.month);
      expect(used.month).toBeGreaterThan(caps.month - 7);
      expect(view.verifyTotals()).toEqual([]);
      const totals = view.ledgerTotals();
      expect(totals.all.reserved + totals.all.spent).toBe(used.month);
      expect(results.every((r) => r.admitted > 0)).toBe(true);
      expect(results.reduce((s, r) => s + r.refused, 0)).toBeGreaterThan(0);
      printFigures('four processes reserving on one PostgreSQL state', {
        admitted: results.reduce((s, r) => s + r.admitted, 0),
        refused: results.reduce((s, r) => s + r.refused, 0),
        'month credits used': `${used.month} of cap ${caps.month}`,
      });
    } finally {
      view.close();
    }
  });

  it('race at the cap of each of 30 runs together, and never pass one', async () => {
    const url = await freshDatabase('crowd');
    const setup = openState(url, { scope: 'setup' });
    const runIds = Array.from({ length: 30 }, () => setup.startRun('sync'));
    const caps = { run: 10, day: 1_000_000, month: 1_000_000 };
    try {
      const results = await runners(url, 4, 'crowd', 0, caps, runIds);
      const used = runIds.map((run) => setup.creditsUsed(run).run);
      expect(used).toEqual(runIds.map(() => caps.run));
      expect(results.reduce((s, r) => s + r.admitted, 0)).toBe(30 * caps.run);
      expect(setup.verifyTotals()).toEqual([]);
    } finally {
      setup.close();
    }
  });

  it('buys each content once across runners: the others wait for the first and reuse its copy', async () => {
    const url = await freshDatabase('claims');
    const caps = { run: 1_000_000, day: 1_000_000, month: 1_000_000 };
    const results = await runners(url, 5, 'claim', 20, caps);
    const bought = results.flatMap((r) => r.bought);
    expect(bought.length).toBe(20);
    expect(new Set(bought).size).toBe(20);
    expect(results.reduce((s, r) => s + r.reused, 0)).toBe(4 * 20);
    const view = openState(url, { lock: false });
    try {
      expect(view.creditsUsed(null).month).toBe(20 * 5);
      expect(view.verifyTotals()).toEqual([]);
      // Every runner's file is tracked against the one copy.
      const index = view.loadTrackedFiles();
      for (let i = 0; i < 20; i++) {
        const ids = new Set([1, 2, 3, 4, 5].map((n) => index.find(`src${n}`, `common-${i}.md`)?.remoteId));
        expect(ids.size).toBe(1);
        expect([...ids][0]).toMatch(new RegExp(`^copy-${i}-by-src\\d$`));
      }
    } finally {
      view.close();
    }
  });

  it('leaves a killed runner’s reservation to the next runner of its sources, and no live runner’s', async () => {
    const url = await freshDatabase('kill');
    const caps = { run: 100, day: 100, month: 100 };
    const live = openState(url, { scope: 'src9' }) as PgStateStore;
    const liveRun = live.startRun('sync');
    const liveOp = live.enqueue({
      kind: 'upload',
      source: 'src9',
      path: 'live.md',
      sha256: 'e'.repeat(64),
      size: 1,
      mtimeNs: '1',
      inode: 1,
      remoteName: 'live.md',
      credits: 3,
      runId: liveRun,
    });
    expect(live.reserve(liveOp, caps, liveRun)).toEqual({ ok: true });

    const child = forkTs('./pg-runner.ts', [JSON.stringify({ url, mode: 'hold', seed: 1, count: 1, caps, scope: 'src1' })]);
    await firstMessage(child);
    const held = firstMessage<{ held: number }>(child);
    child.send('go');
    const { held: opId } = await held;
    child.kill('SIGKILL');
    expect(await exited(child)).toBe('SIGKILL');

    const other = openState(url, { scope: 'src2' }) as PgStateStore;
    const next = openState(url, { scope: 'src1' }) as PgStateStore;
    try {
      // The kill is seen by whoever opens next: the op is unknown, its credits still reserved.
      expect(other.recoveredInFlight + next.recoveredInFlight).toBe(1);
      expect(next.getOp(opId)).toMatchObject({ state: 'unknown', reserved: 5 });
      expect(next.creditsUsed(null).month).toBe(8);
      // Only a runner of the same sources is given it to reconcile; the live runner's op is untouched.
      expect(next.unknownOps().map((o) => o.id)).toEqual([opId]);
      expect(other.unknownOps()).toEqual([]);
      expect(other.openOpCounts()).toEqual({ pending: other.pendingOps().length, unknown: 0 });
      expect(live.getOp(liveOp)).toMatchObject({ state: 'in_flight' });
      const runners = next.runners();
      // The runners that wrote: the live one, and the killed one with what it still holds (the two openers wrote nothing yet).
      expect(runners.map((r) => [r.scope, r.alive]).sort()).toEqual([
        ['src1', false],
        ['src9', true],
      ]);
      expect(runners.find((r) => !r.alive)).toMatchObject({ scope: 'src1', reserved: 5 });
      next.resolveUnknown(opId, null);
      expect(next.creditsUsed(null).month).toBe(3);
    } finally {
      for (const s of [live, other, next]) s.close();
    }
  });
});
