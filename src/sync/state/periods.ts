/** Budget periods are UTC: a day is "YYYY-MM-DD", a month "YYYY-MM". */
export type Periods = { run: string; day: string; month: string };

const DAY_MS = 86_400_000;

/** The UTC day of an instant, "YYYY-MM-DD". */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The UTC month of an instant, "YYYY-MM". */
export function utcMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** Whole UTC days since the epoch (the ledger's period_day). */
export function epochDay(atMs: number): number {
  return Math.floor(atMs / DAY_MS);
}

/** The keys of the budget_totals rows that credits of run `runId` counted at `at` belong to. */
export function periodKeys(runId: number, at: Date): Periods {
  return { run: `run:${runId}`, day: `day:${utcDay(at)}`, month: `month:${utcMonth(at)}` };
}

/** periodKeys for a ledger row's run and period_day. */
export function periodKeysOfDay(runId: number, periodDay: number): Periods {
  return periodKeys(runId, new Date(periodDay * DAY_MS));
}
