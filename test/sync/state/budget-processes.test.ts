import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { printFigures } from '../../helpers/figures.js';
import { exited, firstMessage, forkTs } from './fixtures/fork-ts.js';
import { tempState } from './fixtures/state-dir.js';

describe('two processes reserving on one state file', () => {
  let t: ReturnType<typeof tempState>;
  afterEach(() => t.cleanup());

  it('never admit past a cap together, and the ledger stays consistent', async () => {
    t = tempState();
    const setup = t.open();
    const run = setup.startRun('sync');
    const caps = { run: 150, day: 400, month: 600 };
    const children = [1, 2].map((seed) => forkTs('./reserve-worker.ts', [t.path, String(seed), '100', JSON.stringify(caps), String(run)]));
    await Promise.all(children.map((c) => firstMessage(c)));

    const results = children.map((c) => firstMessage<{ admitted: number; refused: number }>(c));
    for (const c of children) c.send('go');
    const [a, b] = await Promise.all(results);
    expect(await Promise.all(children.map(exited))).toEqual([0, 0]);

    const used = setup.creditsUsed(run);
    expect(used.run).toBeLessThanOrEqual(caps.run);
    expect(setup.verifyTotals()).toEqual([]);
    const ledgerRun = setup.ledgerTotals().byRun.get(run) ?? { reserved: 0, spent: 0 };
    expect(ledgerRun.reserved + ledgerRun.spent).toBe(used.run);
    // They really competed: both got work in, the cap was reached, and their writes interleaved.
    expect([a?.admitted, b?.admitted].every((n) => (n ?? 0) > 0)).toBe(true);
    expect((a?.refused ?? 0) + (b?.refused ?? 0)).toBeGreaterThan(0);
    expect(used.run).toBeGreaterThan(caps.run - 7);
    const raw = new Database(t.path, { readonly: true });
    const owners = (raw.prepare('SELECT path FROM outbox ORDER BY id').pluck().all() as string[]).map((p) => p.split('/')[0]);
    raw.close();
    const switches = owners.filter((o, i) => i > 0 && o !== owners[i - 1]).length;
    expect(switches).toBeGreaterThanOrEqual(2);
    printFigures('two processes reserving on one state file', {
      admitted: (a?.admitted ?? 0) + (b?.admitted ?? 0),
      refused: (a?.refused ?? 0) + (b?.refused ?? 0),
      'run credits used': `${used.run} of cap ${caps.run}`,
      'turns between the processes': switches,
    });
  });
});
