import { WEBHOOK_TOLERANCE_SEC } from '../../../client/webhook-verify.js';
import { WEBHOOK_EVENTS_KEEP_DAYS, WEBHOOK_EVENTS_KEEP_ROWS, WEBHOOK_PRUNE_EVERY_MS } from '../retention.js';
import type { WebhookEventRecord } from '../state-types.js';
import type { Db } from './db.js';

/** The `webhook_events` table on PostgreSQL (sqlite/webhook-events.ts is the SQLite one). */
export function createPgWebhookEvents(db: Db) {
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
  return {
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
  };
}
