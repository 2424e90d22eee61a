import type { BudgetPeriod } from '../sync/types.js';

/**
 * When the budget period that deferred work opens again: the next UTC midnight for the day cap, the
 * first of the next UTC month for the month cap. The run cap has no period to wait for (each sync cycle
 * of `kbsync watch` is a run): null, and that work goes with the next cycle.
 */
export function nextPeriodStartMs(period: BudgetPeriod, nowMs: number): number | null {
  const now = new Date(nowMs);
  if (period === 'day') return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  if (period === 'month') return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return null;
}

/** The earliest time a budget period holding back some of `deferredBy` opens again, or null. */
export function rolloverAtMs(deferredBy: Iterable<BudgetPeriod>, nowMs: number): { atMs: number; period: BudgetPeriod } | null {
  let best: { atMs: number; period: BudgetPeriod } | null = null;
  for (const period of new Set(deferredBy)) {
    const atMs = nextPeriodStartMs(period, nowMs);
    if (atMs !== null && (best === null || atMs < best.atMs)) best = { atMs, period };
  }
  return best;
}
