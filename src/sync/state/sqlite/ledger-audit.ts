import type { Database } from 'better-sqlite3';
import { sumLedgerGroups, type LedgerGroup } from '../ledger-math.js';
import type { LedgerSums, LedgerTotals } from '../state-types.js';

/** Re-sums the append-only ledger and checks it against the running totals and the outbox. */
export function createLedgerAudit(db: Database) {
  // A closing row (spend or release) ends the reservation made by the op's previous row, which must be a reserve.
  const groups = db.prepare<[], LedgerGroup>(`
    WITH rows AS (
      SELECT run_id, period_day, kind, credits,
             lag(credits) OVER (PARTITION BY op_id ORDER BY id) AS prev_credits
      FROM ledger)
    SELECT run_id, period_day,
           sum(CASE kind WHEN 'reserve' THEN credits ELSE 0 END) AS reserve,
           sum(CASE kind WHEN 'release' THEN credits ELSE 0 END) AS released,
           sum(CASE WHEN kind = 'reserve' THEN 0 ELSE coalesce(prev_credits, 0) END) AS closed,
           sum(CASE kind WHEN 'spend' THEN credits ELSE 0 END) AS spend
    FROM rows GROUP BY run_id, period_day`);
  const misordered = db.prepare<[], { op_id: number; kind: string; prev: string | null }>(`
    SELECT op_id, kind, prev FROM (
      SELECT op_id, kind, lag(kind) OVER (PARTITION BY op_id ORDER BY id) AS prev FROM ledger)
    WHERE (kind = 'reserve' AND prev = 'reserve') OR (kind <> 'reserve' AND (prev IS NULL OR prev <> 'reserve')) LIMIT 20`);
  const doubleSpend = db.prepare<[], { op_id: number; n: number }>(
    `SELECT op_id, count(*) AS n FROM ledger WHERE kind = 'spend' GROUP BY op_id HAVING n > 1 LIMIT 20`,
  );
  const allTotals = db.prepare<[], { period: string; reserved: number; spent: number }>(
    'SELECT period, reserved, spent FROM budget_totals',
  );
  const outstanding = db.prepare<[], number>('SELECT coalesce(sum(reserved), 0) FROM outbox').pluck();

  const ledgerTotals = (): LedgerTotals => sumLedgerGroups(groups.all());

  return {
    /** Totals re-summed from the ledger rows (the audit view; reserve() uses running totals). */
    ledgerTotals,
    /** Inconsistencies between ledger, running totals and outbox reservations; [] when all agree. */
    verifyTotals(): string[] {
      const problems: string[] = [];
      for (const r of misordered.all()) problems.push(`op ${r.op_id}: ${r.kind} after ${r.prev ?? 'nothing'}`);
      for (const r of doubleSpend.all()) problems.push(`op ${r.op_id}: spent ${r.n} times`);
      const ledger = ledgerTotals();
      const expected = new Map<string, LedgerSums>();
      for (const [k, v] of ledger.byRun) expected.set(`run:${k}`, v);
      for (const [k, v] of ledger.byDay) expected.set(`day:${k}`, v);
      for (const [k, v] of ledger.byMonth) expected.set(`month:${k}`, v);
      const seen = new Set<string>();
      for (const row of allTotals.all()) {
        seen.add(row.period);
        const want = expected.get(row.period) ?? { reserved: 0, spent: 0 };
        if (want.reserved !== row.reserved || want.spent !== row.spent) {
          problems.push(`${row.period}: totals ${row.reserved} reserved/${row.spent} spent, ledger ${want.reserved}/${want.spent}`);
        }
      }
      for (const period of expected.keys()) if (!seen.has(period)) problems.push(`${period}: in the ledger, missing from the totals`);
      const held = outstanding.get() as number;
      if (held !== ledger.all.reserved) problems.push(`outbox holds ${held} reserved credits, the ledger ${ledger.all.reserved}`);
      return problems;
    },
  };
}
