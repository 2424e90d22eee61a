import { describe, expect, it } from 'vitest';
import { fakeObservation, planInput, remoteCopy } from '../../../test/helpers/plan-fakes.js';
import { MIB, type Plan } from '../../shared/plans.js';
import { planSync } from './plan-sync.js';

describe('planSync: file size limits', () => {
  it.each([
    ['basic', 100 * MIB, 'upload', ''],
    ['basic', 100 * MIB + 1, 'skip:too-large', "over the basic plan's 104,857,600 bytes limit (file is 104,857,601 bytes)"],
    ['free', 120 * MIB + 314_573, 'skip:too-large', "over the free plan's 100 MB limit (file is 120.3 MB)"],
    ['pro', 500 * MIB, 'upload', ''],
    ['pro', 500 * MIB + 1, 'skip:too-large', "over the pro plan's 524,288,000 bytes limit (file is 524,288,001 bytes)"],
    ['enterprise', 200 * MIB, 'upload', ''],
  ] as const)('%s plan, %i bytes → %s', (plan: Plan, size, action, reason) => {
    const observation = fakeObservation().file('big.csv', { size }).build();

    const result = planSync(planInput({ observation, plan }));

    expect(result.items[0]).toMatchObject({ action });
    if (action === 'skip:too-large')
      expect(result.items[0]).toMatchObject({ reason, credits: 0, limitBytes: plan === 'pro' ? 500 * MIB : 100 * MIB });
    else expect(result.items[0]?.credits).toBe(5 + Math.ceil((size - 5 * MIB) / MIB));
  });

  it.each([
    [1000, 1000, 'upload'],
    [1000, 1001, 'skip:too-large'],
  ] as const)('limits.maxFileBytes %i below the plan limit: a %i-byte file → %s', (maxFileBytes, size, action) => {
    const observation = fakeObservation().file('a.md', { size }).build();

    const plan = planSync(planInput({ observation, limits: { maxFileBytes } }));

    expect(plan.items[0]?.action).toBe(action);
    expect(plan.limits).toEqual({ plan: 'basic', planMaxFileBytes: 100 * MIB, maxFileBytes, effectiveMaxFileBytes: maxFileBytes });
  });

  it('names limits.maxFileBytes in the reason when it is the binding limit', () => {
    const observation = fakeObservation()
      .file('a.md', { size: 60 * MIB + 200_000 })
      .build();

    const plan = planSync(planInput({ observation, limits: { maxFileBytes: 50 * MIB } }));

    expect(plan.items[0]).toMatchObject({
      action: 'skip:too-large',
      reason: 'over limits.maxFileBytes (50 MB; file is 60.2 MB)',
      limitBytes: 50 * MIB,
    });
  });

  it('a maxFileBytes above the plan limit does not raise it', () => {
    const observation = fakeObservation()
      .file('a.md', { size: 100 * MIB + 1 })
      .build();

    const plan = planSync(planInput({ observation, limits: { maxFileBytes: 400 * MIB } }));

    expect(plan.items[0]?.action).toBe('skip:too-large');
    expect(plan.limits.effectiveMaxFileBytes).toBe(100 * MIB);
  });

  it('two over-limit files with the same content are both too large (neither uploads, so neither is a duplicate)', () => {
    const observation = fakeObservation().file('a.md', { size: 2000, content: 'X' }).file('b.md', { size: 2000, content: 'X' }).build();

    const plan = planSync(planInput({ observation, limits: { maxFileBytes: 1000 } }));

    expect(plan.items.map((i) => i.action)).toEqual(['skip:too-large', 'skip:too-large']);
  });

  it('an over-limit file whose content is already in the dataset is a duplicate, not too large', () => {
    const observation = fakeObservation().file('a.md', { size: 2000, content: 'X' }).build();
    const remote = [remoteCopy('old/a.md', { content: 'X' })];

    const plan = planSync(planInput({ observation, remote, limits: { maxFileBytes: 1000 } }));

    expect(plan.items.map((i) => i.action)).toEqual(['skip:duplicate-content']);
  });
});
