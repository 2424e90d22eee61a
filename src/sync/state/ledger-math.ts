import { periodKeys, periodKeysOfDay, utcDay, utcMonth } from './periods.js';
import type { CreditsUsed, LedgerSums, LedgerTotals } from './state-types.js';

/** A period's running totals (a `budget_totals` row without its key). */
export type PeriodTotals = { reserved: number; spent: number };

/** The ledger summed by run and UTC day, as both stores' audit query returns it. */
export type LedgerGroup = { run_id: number; period_day: number; reserve: number; released: number; closed: number; spend: number };

/** The ledger's totals (all, by run, by UTC day, by UTC month) from its per-run-and-day sums; the same for both stores. */
export function sumLedgerGroups(groups: Iterable<LedgerGroup>): LedgerTotals {
  const totals: LedgerTotals = {
    all: { reserve: 0, release: 0, spend: 0, reserved: 0, spent: 0 },
    byRun: new Map(),
    byDay: new Map(),
    byMonth: new Map(),
  };
  const add = <K>(map: Map<K, LedgerSums>, key: K, reserved: number, spent: number): void => {
    const s = map.get(key) ?? { reserved: 0, spent: 0 };
    map.set(key, { reserved: s.reserved + reserved, spent: s.spent + spent });
  };
  for (const g of groups) {
    const keys = periodKeysOfDay(g.run_id, g.period_day);
    const reserved = g.reserve - g.closed;
    totals.all.reserve += g.reserve;
    totals.all.release += g.released;
    totals.all.spend += g.spend;
    totals.all.reserved += reserved;
    add(totals.byRun, g.run_id, reserved, g.spend);
    add(totals.byDay, keys.day.slice(4), reserved, g.spend);
    add(totals.byMonth, keys.month.slice(6), reserved, g.spend);
  }
  totals.all.spent = totals.all.spend;
  return totals;
}

/**
 * Credits used (reserved + spent) in the run, the UTC day and the UTC month of `at`, from each period's
 * running totals (`usedIn` gives zeros for a period with none); no run (null) counts zero for the run.
 */
export function creditsUsedOf(runId: number | null, at: Date, usedIn: (period: string) => PeriodTotals): CreditsUsed {
  const keys = periodKeys(runId ?? 0, at);
  const run = runId === null ? { reserved: 0, spent: 0 } : usedIn(keys.run);
  const day = usedIn(keys.day);
  const month = usedIn(keys.month);
  return {
    run: run.reserved + run.spent,
    day: day.reserved + day.spent,
    month: month.reserved + month.spent,
    spent: { run: run.spent, day: day.spent, month: month.spent },
    reserved: { run: run.reserved, day: day.reserved, month: month.reserved },
    utcDay: utcDay(at),
    utcMonth: utcMonth(at),
  };
}
