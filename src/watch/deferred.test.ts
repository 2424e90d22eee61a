import { describe, expect, it } from 'vitest';
import type { BudgetPeriod, RunItem } from '../sync/types.js';
import { createDeferredFiles, deferredWork, nextForRunCap } from './deferred.js';

function item(path: string, deferredBy?: BudgetPeriod, cost = 5): RunItem {
  return {
    source: 'docs',
    path,
    action: deferredBy === undefined ? 'upload' : 'defer:over-budget',
    reason: '',
    credits: deferredBy === undefined ? cost : 0,
    size: 1,
    sha256: null,
    remoteName: path,
    remoteId: null,
    outcome: deferredBy === undefined ? 'done' : 'not-run',
    creditsCharged: 0,
    error: null,
    ...(deferredBy === undefined ? {} : { deferredBy, cost }),
  };
}

const caps = { run: 20, day: 1000, month: 10_000 };

describe('nextForRunCap', () => {
  it('goes on after a cycle that sent something and deferred files the cap can hold', () => {
    expect(nextForRunCap([item('a'), item('b', 'run')], caps, true)).toEqual({ again: true, files: 1, neverFit: [] });
  });

  it('stops when only files above the cap alone are left, or when the cycle sent nothing', () => {
    const big = item('big', 'run', 25);
    expect(nextForRunCap([item('a'), big], caps, true)).toEqual({ again: false, files: 1, neverFit: [big] });
    expect(nextForRunCap([item('b', 'run')], caps, false).again).toBe(false);
  });

  it('leaves day and month deferrals to their period', () => {
    expect(nextForRunCap([item('a'), item('b', 'day'), item('c', 'month')], caps, true).again).toBe(false);
  });
});

describe('deferred work across cycles', () => {
  it('a whole cycle says every deferred file; a scoped one only those it looked at', () => {
    const files = createDeferredFiles();
    expect([...files([item('a', 'day'), item('b', 'run')], false)]).toEqual(['day', 'run']);
    expect([...files([item('b')], true)]).toEqual(['day']);
    expect([...files([item('c', 'month')], false)]).toEqual(['month']);
  });

  it('counts by cap and says what each waits for', () => {
    const opens = (p: BudgetPeriod): string | null => (p === 'day' ? '2026-01-02T00:00:00.000Z' : null);
    expect(deferredWork(['run', 'run', 'day'], { again: true, neverFit: 0, periodOpensAt: opens })).toEqual({
      files: 3,
      byPeriod: { run: 2, day: 1 },
      waitsFor: [
        '2 by budget.maxCreditsPerRun: the next cycle, started right after this one',
        '1 by budget.maxCreditsPerDay: the day to open at 2026-01-02T00:00:00.000Z',
      ],
    });
    expect(deferredWork([], { again: false, neverFit: 0, periodOpensAt: opens })).toBeNull();
  });
});
