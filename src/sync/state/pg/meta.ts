import { sumLedgerGroups, type LedgerGroup } from '../ledger-math.js';
import type { LedgerSums, LedgerTotals } from '../state-types.js';
import { WEBHOOK_TOLERANCE_SEC } from '../../../client/webhook-verify.js';
import {
  WEBHOOK_EVENTS_KEEP_DAYS,
  WEBHOOK_EVENTS_KEEP_ROWS,
  WEBHOOK_PRUNE_EVERY_MS,
  type WebhookEventRecord,
} from '../sqlite/webhook-events.js';
import type { Db } from './db.js';

const commitKey = (source: string): string => `git.last_commit.${source}`;

/** meta, webhook deliveries and the ledger audit on PostgreSQL (sqlite/meta.ts, sqlite/webhook-events.ts, sqlite/ledger-audit.ts for SQLite). */
export function createPgMisc(db: Db) {
  const get = async (key: string): Promise<string | null> =>
    (await db.q<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key]))[0]?.value ?? null;
  const set = async (key: string, value: string | null): Promise<void> => {
    if (value === null) await db.run('DELETE FROM meta WHERE key = $1', [key]);
    else await db.run('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  };
  let lastPrunedMs = -Infinity;
  /** The same retention as SQLite's (sqlite/webhook-events.ts): past the days or the rows kept, and only once stale; by the store's clock. */
  const pruneWebhookEvents = (): Promise<number> => {
    const now = db.nowMs();
    lastPrunedMs = now;
    return db.run(
      `DELETE FROM webhook_events WHERE sent_at < $1 AND (received_at < $2
         OR id NOT IN (SELECT id FROM webhook_events ORDER BY received_at DESC, id LIMIT $3))`,
      [Math.floor(now / 1000) - WEBHOOK_TOLERANCE_SEC, now - WEBHOOK_EVENTS_KEEP_DAYS * 86_400_000, WEBHOOK_EVENTS_KEEP_ROWS],
    );
  };
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
    getMeta: get,
    setMeta: set,
    remoteCheckPending: async (): Promise<boolean> => (await get('remote_check')) !== null,
    async lastSyncedCommit(source: string, scope: string): Promise<string | null> {
      const value = await get(commitKey(source));
      if (value === null || !value.startsWith('{')) return null;
      const stored = JSON.parse(value) as { commit?: unknown; scope?: unknown };
      return stored.scope === scope && typeof stored.commit === 'string' ? stored.commit : null;
    },
    setLastSyncedCommit: (source: string, commit: string, scope: string): Promise<void> =>
      set(commitKey(source), JSON.stringify({ commit, scope })),
    /** As SQLite's: a fresh delivery also prunes, at most once per WEBHOOK_PRUNE_EVERY_MS (a daemon runs for months). */
    async recordWebhookEvent(e: WebhookEventRecord): Promise<boolean> {
      const data = e.data === null || e.data === undefined ? null : JSON.stringify(e.data);
      const n = await db.run(
        'INSERT INTO webhook_events (id, type, sent_at, received_at, data_json) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING',
        [e.id, e.type, e.sentAtSec, e.receivedAtMs, data],
      );
      if (n === 1 && db.nowMs() - lastPrunedMs >= WEBHOOK_PRUNE_EVERY_MS) await pruneWebhookEvents();
      return n === 1;
    },
    pruneWebhookEvents,
    webhookEventSeen: async (id: string): Promise<boolean> => (await db.q('SELECT 1 FROM webhook_events WHERE id = $1', [id])).length > 0,
    async webhookEvents(limit = 100): Promise<WebhookEventRecord[]> {
      const rows = await db.q<{ id: string; type: string; sent_at: number; received_at: number; data_json: string | null }>(
        'SELECT id, type, sent_at, received_at, data_json FROM webhook_events ORDER BY received_at DESC, id LIMIT $1',
        [limit],
      );
      return rows.map((r) => ({
        id: r.id,
        type: r.type,
        sentAtSec: r.sent_at,
        receivedAtMs: r.received_at,
        data: r.data_json === null ? null : (JSON.parse(r.data_json) as unknown),
      }));
    },
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
