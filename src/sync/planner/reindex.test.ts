import { describe, expect, it } from 'vitest';
import { fakeBudget, fakeObservation, planInput } from '../../../test/helpers/plan-fakes.js';
import type { Plan } from '../../shared/plans.js';
import type { BudgetWindow } from '../types.js';
import { planSync } from './plan-sync.js';

function newFiles(n: number) {
  const b = fakeObservation();
  for (let i = 0; i < n; i++) b.file(`f${String(i).padStart(3, '0')}.md`);
  return b.build();
}

describe('planSync: reindex', () => {
  it.each([
    ['pro', 3, 3, true, true, 2, '3 changed files (reindex.minChangedFiles is 3)'],
    ['pro', 2, 3, false, true, 0, '2 changed files, fewer than reindex.minChangedFiles (3)'],
    ['team', 5, 3, true, true, 2, '5 changed files (reindex.minChangedFiles is 3)'],
    ['basic', 3, 3, true, false, 0, '3 changed files, but reindex is not available on the basic plan (Advanced tier only)'],
    ['free', 4, 3, true, false, 0, '4 changed files, but reindex is not available on the free plan (Advanced tier only)'],
    ['free', 1, 3, false, false, 0, '1 changed file, fewer than reindex.minChangedFiles (3)'],
  ] as const)(
    '%s plan, %i changed, threshold %i → wanted %s, allowed %s, %i credits',
    (plan: Plan, n, min, wanted, allowed, credits, reason) => {
      const result = planSync(planInput({ observation: newFiles(n), plan, reindexMinChangedFiles: min }));

      expect(result.reindex).toEqual({
        wanted,
        allowed,
        blockedBy: allowed ? null : 'tier',
        reason,
        credits,
        changedFiles: n,
        minChangedFiles: min,
      });
      expect(result.totals.creditsPlanned).toBe(5 * n + credits);
    },
  );

  it('counts reindex credits in the budget: they are set aside so a full budget still reindexes', () => {
    const plan = planSync(planInput({ observation: newFiles(4), plan: 'pro', reindexMinChangedFiles: 3, budget: fakeBudget({ run: 20 }) }));

    expect(plan.items.map((i) => i.action)).toEqual(['upload', 'upload', 'upload', 'defer:over-budget']);
    expect(plan.items[3]?.reason).toBe(
      'would exceed maxCreditsPerRun (17 + 5 > 20, including 2 for the reindex); upload (new file) waits for the next run',
    );
    expect(plan.reindex).toMatchObject({ wanted: true, allowed: true, credits: 2 });
    expect(plan.totals.creditsPlanned).toBe(17);
  });

  it('does not hold reindex credits when the threshold cannot be reached with them: the files get the budget', () => {
    const plan = planSync(planInput({ observation: newFiles(3), plan: 'pro', reindexMinChangedFiles: 3, budget: fakeBudget({ run: 15 }) }));

    expect(plan.items.map((i) => i.action)).toEqual(['upload', 'upload', 'upload']);
    expect(plan.reindex).toMatchObject({
      wanted: true,
      allowed: false,
      blockedBy: 'run',
      credits: 0,
      reason: '3 changed files, but a reindex would exceed maxCreditsPerRun (15 + 2 > 15)',
    });
    expect(plan.totals.creditsPlanned).toBe(15);
  });

  it.each([
    ['run cap 17 (15 + 2 = 17)', fakeBudget({ run: 17 }), true],
    ['run cap 16', fakeBudget({ run: 16 }), false],
    ['day cap 100 with 83 used', fakeBudget({ day: 100 }, { day: 83 }), true],
    ['day cap 100 with 84 used', fakeBudget({ day: 100 }, { day: 84 }), false],
    ['month cap 100 with 83 used', fakeBudget({ month: 100 }, { month: 83 }), true],
    ['month cap 100 with 84 used', fakeBudget({ month: 100 }, { month: 84 }), false],
  ] as const)('three 5-credit uploads on pro, %s → reindex allowed %s', (_label, budget: BudgetWindow, allowed) => {
    const plan = planSync(planInput({ observation: newFiles(3), plan: 'pro', reindexMinChangedFiles: 3, budget }));

    expect(plan.reindex.allowed).toBe(allowed);
    expect(plan.items.filter((i) => i.action === 'upload')).toHaveLength(3);
  });

  it('renames, duplicates and unchanged files are not changes that want a reindex', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).file('b.md', { content: 'X' }).build();

    const plan = planSync(planInput({ observation, plan: 'pro', reindexMinChangedFiles: 2 }));

    expect(plan.reindex).toMatchObject({ wanted: false, changedFiles: 1 });
  });
});
