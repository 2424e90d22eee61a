import type { BudgetCaps } from '../sync/state/index.js';
import type { BudgetPeriod, RunItem } from '../sync/types.js';

/** Work a cycle left for later because of the budget, as `kbsync status` shows it. */
export type DeferredWork = {
  /** Files (and intelligence entries) deferred, in all. */
  files: number;
  byPeriod: Partial<Record<BudgetPeriod, number>>;
  /** What each kind of deferred work waits for, in words. */
  waitsFor: string[];
};

/** What a cycle's per-run-cap deferral leads to: another cycle now, or nothing (see nextForRunCap). */
export type RunCapNext = { again: boolean; files: number; neverFit: RunItem[] };

/**
 * Work deferred by budget.maxCreditsPerRun is the next cycle's (a cycle is a run, with a cap of its
 * own), started right after this one: unless no deferred file fits the cap even alone (its cost is
 * above it: no run ever sends it), or this cycle sent nothing (the next would defer the same again).
 */
export function nextForRunCap(items: readonly RunItem[], caps: BudgetCaps, progressed: boolean): RunCapNext {
  const deferred = items.filter((i) => i.deferredBy === 'run' && i.action === 'defer:over-budget');
  const paid = deferred.filter((i) => i.cost !== undefined && i.cost > 0);
  const neverFit = paid.filter((i) => (i.cost as number) > caps.run);
  const again = progressed && paid.length > neverFit.length;
  return { again, files: deferred.length, neverFit };
}

/**
 * The files the budget deferred, by the cap that held each back, as the cycles saw them: a cycle of
 * every source says them all; a scoped one says those it looked at, and the others stay as they were.
 */
export function createDeferredFiles(): (items: readonly RunItem[], scoped: boolean) => Iterable<BudgetPeriod> {
  let deferred = new Map<string, BudgetPeriod>();
  return (items, scoped) => {
    if (!scoped) deferred = new Map();
    for (const item of items) {
      const key = `${item.source}\0${item.path}`;
      if (item.deferredBy === undefined) deferred.delete(key);
      else deferred.set(key, item.deferredBy);
    }
    return deferred.values();
  };
}

/** Deferred work counted by the cap that held it back (see createDeferredFiles), with what it waits for. */
export function deferredWork(
  periods: Iterable<BudgetPeriod>,
  o: { again: boolean; neverFit: number; periodOpensAt: (period: BudgetPeriod) => string | null },
): DeferredWork | null {
  const byPeriod: Partial<Record<BudgetPeriod, number>> = {};
  let files = 0;
  for (const period of periods) {
    byPeriod[period] = (byPeriod[period] ?? 0) + 1;
    files++;
  }
  if (files === 0) return null;
  const waitsFor: string[] = [];
  const run = byPeriod.run ?? 0;
  if (run > 0) {
    if (o.again) waitsFor.push(`${run} by budget.maxCreditsPerRun: the next cycle, started right after this one`);
    else if (o.neverFit === run) waitsFor.push(`${run} by budget.maxCreditsPerRun: each costs more than the cap (raise it to send them)`);
    else waitsFor.push(`${run} by budget.maxCreditsPerRun: the next change or rescan`);
  }
  for (const period of ['day', 'month'] as const) {
    const n = byPeriod[period] ?? 0;
    const at = o.periodOpensAt(period);
    const cap = period === 'day' ? 'maxCreditsPerDay' : 'maxCreditsPerMonth';
    if (n > 0) waitsFor.push(`${n} by budget.${cap}: the ${period} to open${at === null ? '' : ` at ${at}`}`);
  }
  return { files, byPeriod, waitsFor };
}
