import { describe, expect, it } from 'vitest';
import { fakeBudget, fakeObservation, fakeState, planInput } from '../../../test/helpers/plan-fakes.js';
import { MIB } from '../../shared/plans.js';
import type { SyncPlan } from '../types.js';
import { planSync } from './plan-sync.js';

/** Files costing 5, 6, 7 ... credits (5 MB + n MB). */
function observationCosting(costs: Record<string, number>) {
  const b = fakeObservation();
  for (const [path, cost] of Object.entries(costs)) b.file(path, { size: 5 * MIB + (cost - 5) * MIB });
  return b.build();
}

const decisions = (plan: SyncPlan) => plan.items.map((i) => [i.path, i.action, i.credits]);

describe('planSync: budget admission', () => {
  it.each([
    ['run', { run: 11 }, {}],
    ['day', { day: 2011 }, { day: 2000 }],
    ['month', { month: 20_011 }, { month: 20_000 }],
  ] as const)('%s cap: exactly equal is admitted', (_period, caps, used) => {
    const observation = observationCosting({ 'a.md': 5, 'b.md': 6 });

    const plan = planSync(planInput({ observation, budget: fakeBudget(caps, used) }));

    expect(decisions(plan)).toEqual([
      ['a.md', 'upload', 5],
      ['b.md', 'upload', 6],
    ]);
  });

  it.each([
    ['run', { run: 10 }, {}, 'would exceed maxCreditsPerRun (5 + 6 > 10); upload (new file) waits for the next run'],
    [
      'day',
      { day: 2010 },
      { day: 2000 },
      'would exceed maxCreditsPerDay (2,005 + 6 > 2,010); upload (new file) waits for the next UTC day',
    ],
    [
      'month',
      { month: 20_010 },
      { month: 20_000 },
      'would exceed maxCreditsPerMonth (20,005 + 6 > 20,010); upload (new file) waits for the next UTC month',
    ],
  ] as const)('%s cap: one credit short defers the larger file, naming the period', (period, caps, used, reason) => {
    const observation = observationCosting({ 'a.md': 5, 'b.md': 6 });

    const plan = planSync(planInput({ observation, budget: fakeBudget(caps, used) }));

    expect(decisions(plan)).toEqual([
      ['a.md', 'upload', 5],
      ['b.md', 'defer:over-budget', 0],
    ]);
    expect(plan.items[1]).toMatchObject({ reason, deferredBy: period, deferredAction: 'upload', cost: 6 });
    expect(plan.totals).toMatchObject({ uploaded: 1, deferred: 1, creditsPlanned: 5 });
  });

  it.each([
    [1994, 'upload'],
    [1995, 'defer:over-budget'],
  ] as const)('%i credits already used today, a 6-credit file against maxCreditsPerDay 2,000 → %s', (day, action) => {
    const observation = observationCosting({ 'a.md': 6 });

    const plan = planSync(planInput({ observation, budget: fakeBudget({ day: 2000 }, { day }) }));

    expect(plan.items[0]?.action).toBe(action);
    if (action === 'defer:over-budget') expect(plan.items[0]?.reason).toMatch(/^would exceed maxCreditsPerDay \(1,995 \+ 6 > 2,000\);/);
  });

  it('admits the smallest first so the most files fit, whatever the path order', () => {
    const observation = observationCosting({ 'a.md': 9, 'b.md': 7, 'c.md': 5, 'd.md': 5, 'e.md': 20 });

    const plan = planSync(planInput({ observation, budget: fakeBudget({ run: 17 }) }));

    expect(decisions(plan)).toEqual([
      ['a.md', 'defer:over-budget', 0],
      ['b.md', 'upload', 7],
      ['c.md', 'upload', 5],
      ['d.md', 'upload', 5],
      ['e.md', 'defer:over-budget', 0],
    ]);
    expect(plan.items[0]?.reason).toMatch(/^would exceed maxCreditsPerRun \(17 \+ 9 > 17\)/);
    expect(plan.budget.planned).toBe(17);
  });

  it('equal costs are admitted in path order', () => {
    const observation = observationCosting({ 'c.md': 5, 'a.md': 5, 'b.md': 5 });

    const plan = planSync(planInput({ observation, budget: fakeBudget({ run: 10 }) }));

    expect(decisions(plan)).toEqual([
      ['a.md', 'upload', 5],
      ['b.md', 'upload', 5],
      ['c.md', 'defer:over-budget', 0],
    ]);
  });

  it('the first period that stops an item is reported (run, then day, then month)', () => {
    const observation = observationCosting({ 'a.md': 5 });

    const plan = planSync(planInput({ observation, budget: fakeBudget({ run: 4, day: 4, month: 4 }) }));

    expect(plan.items[0]?.deferredBy).toBe('run');
  });

  it('prior usage over the cap defers everything paid but nothing free', () => {
    const observation = fakeObservation().file('new.md').file('same.md').build();
    const tracked = fakeState().tracked('same.md').build();

    const plan = planSync(planInput({ observation, tracked, budget: fakeBudget({ month: 100 }, { month: 120 }) }));

    expect(decisions(plan)).toEqual([
      ['new.md', 'defer:over-budget', 0],
      ['same.md', 'skip:unchanged', 0],
    ]);
  });

  it('a reprocess competes for the budget like an upload', () => {
    const observation = fakeObservation().file('a.md').file('b.md').build();
    const tracked = fakeState().tracked('a.md', { remoteStatus: 'failed', remoteError: 'bad pdf' }).build();

    const plan = planSync(planInput({ observation, tracked, budget: fakeBudget({ run: 5 }) }));

    expect(decisions(plan)).toEqual([
      ['a.md', 'reprocess', 5],
      ['b.md', 'defer:over-budget', 0],
    ]);
  });

  it('a deferred reprocess says so', () => {
    const observation = fakeObservation().file('a.md').build();
    const tracked = fakeState().tracked('a.md', { remoteStatus: 'failed', remoteError: 'bad pdf' }).build();

    const plan = planSync(planInput({ observation, tracked, budget: fakeBudget({ run: 4 }) }));

    expect(plan.items[0]).toMatchObject({
      action: 'defer:over-budget',
      deferredAction: 'reprocess',
      reason:
        'would exceed maxCreditsPerRun (0 + 5 > 4); reprocess (remote processing failed: bad pdf; reprocess 1 of 2) waits until maxCreditsPerRun is raised (it costs more than the cap alone)',
    });
  });

  it('a file that costs more than the cap alone says the cap must be raised, not that the next run sends it', () => {
    const observation = fakeObservation().file('a.md').build();

    const plan = planSync(planInput({ observation, budget: fakeBudget({ run: 4 }) }));

    expect(plan.items[0]).toMatchObject({
      action: 'defer:over-budget',
      reason:
        'would exceed maxCreditsPerRun (0 + 5 > 4); upload (new file) waits until maxCreditsPerRun is raised (it costs more than the cap alone)',
    });
  });

  it('an in-run duplicate waits with the upload it depends on', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).file('b.md', { content: 'X' }).build();

    const plan = planSync(planInput({ observation, budget: fakeBudget({ run: 0 }) }));

    expect(decisions(plan)).toEqual([
      ['a.md', 'defer:over-budget', 0],
      ['b.md', 'defer:over-budget', 0],
    ]);
    expect(plan.items[1]).toMatchObject({
      reason: 'same content as a.md, whose upload waits: would exceed maxCreditsPerRun (0 + 5 > 0)',
      deferredBy: 'run',
    });
  });
});
