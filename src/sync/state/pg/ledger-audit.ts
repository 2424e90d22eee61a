import { sumLedgerGroups, type LedgerGroup } from '../ledger-math.js';
import type { LedgerSums, LedgerTotals } from '../state-types.js';
import type { Db } from './db.js';

/** Re-sums the append-only ledger on PostgreSQL and checks it against the running totals and the outbox (sqlite/ledger-audit.ts for SQLite). */
export function createPgLedgerAudit(db: Db) {
  const ledgerTotals = async (): Promise<LedgerTotals> => {
    const groups = await db.q<LedgerGroup>(`
      WITH rows AS (
        SELECT run_id, period_day, kind, credits, lag(credits) OVER (PARTITION BY op_id ORDER BY id) AS prev_credits FROM ledger)
      SELECT run_id, period_day,
             sum(CASE kind WHEN 'reserve' THEN credits ELSE 0 END)::bigint AS reserve,
             sum(CASE kind WHEN 'release' THEN credits ELSE 0 END)::bigint AS released,
             sum(CASE WHEN kind = 'reserve' THEN 0 ELSE coalesce(prev_credits, 0) END)::bigint AS closed,
             sum(CASE kind WHEN 'spend' THEN credits ELSE 0 END)::bigint AS spend
      FROM rows GROUP BY run_id, period_day`);
    return sumLedgerGroups(groups);
  };
  return {
    ledgerTotals,
    async verifyTotals(): Promise<string[]> {
      const problems: string[] = [];
      const misordered = await db.q<{ op_id: number; kind: string; prev: string | null }>(`
        SELECT op_id, kind, prev FROM (
          SELECT op_id, kind, lag(kind) OVER (PARTITION BY op_id ORDER BY id) AS prev FROM ledger) AS l
        WHERE (kind = 'reserve' AND prev = 'reserve') OR (kind <> 'reserve' AND (prev IS NULL OR prev <> 'reserve')) LIMIT 20`);
      for (const r of misordered) problems.push(`op ${r.op_id}: ${r.kind} after ${r.prev ?? 'nothing'}`);
      const doubles = await db.q<{ op_id: number; n: number }>(
        `SELECT op_id, count(*)::int AS n FROM ledger WHERE kind = 'spend' GROUP BY op_id HAVING count(*) > 1 LIMIT 20`,
      );
      for (const r of doubles) problems.push(`op ${r.op_id}: spent ${r.n} times`);
      const ledger = await ledgerTotals();
      const expected = new Map<string, LedgerSums>();
      for (const [k, v] of ledger.byRun) expected.set(`run:${k}`, v);
      for (const [k, v] of ledger.byDay) expected.set(`day:${k}`, v);
      for (const [k, v] of ledger.byMonth) expected.set(`month:${k}`, v);
      const seen = new Set<string>();
      for (const row of await db.q<{ period: string; reserved: number; spent: number }>(
        'SELECT period, reserved, spent FROM budget_totals',
      )) {
        seen.add(row.period);
        const want = expected.get(row.period) ?? { reserved: 0, spent: 0 };
        if (want.reserved !== row.reserved || want.spent !== row.spent)
          problems.push(`${row.period}: totals ${row.reserved} reserved/${row.spent} spent, ledger ${want.reserved}/${want.spent}`);
      }
      for (const period of expected.keys()) if (!seen.has(period)) problems.push(`${period}: in the ledger, missing from the totals`);
      const held = (await db.q<{ n: number }>('SELECT coalesce(sum(reserved), 0)::bigint AS n FROM outbox'))[0]?.n ?? 0;
      if (held !== ledger.all.reserved) problems.push(`outbox holds ${held} reserved credits, the ledger ${ledger.all.reserved}`);
      return problems;
    },
  };
}
