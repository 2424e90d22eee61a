import type { Database } from 'better-sqlite3';
import { WEBHOOK_TOLERANCE_SEC } from '../../../client/webhook-verify.js';
import { WEBHOOK_EVENTS_KEEP_DAYS, WEBHOOK_EVENTS_KEEP_ROWS, WEBHOOK_PRUNE_EVERY_MS } from '../retention.js';
import type { WebhookEventRecord } from '../state-types.js';

/**
 * The `webhook_events` table: accepted deliveries, whose ids refuse replays. It is pruned to the last
 * WEBHOOK_EVENTS_KEEP_DAYS days and at most WEBHOOK_EVENTS_KEEP_ROWS rows, but a row is only ever
 * dropped once its signed timestamp is older than the verifier's tolerance (WEBHOOK_TOLERANCE_SEC):
 * from then on a replay of it is refused as stale, so forgetting its id lets no replay through.
 */
export function createWebhookEvents(db: Database, nowMs: () => number = Date.now) {
  const insert = db.prepare<[string, string, number, number, string | null]>(
    'INSERT INTO webhook_events (id, type, sent_at, received_at, data_json) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
  );
  const seen = db.prepare<[string], number>('SELECT 1 FROM webhook_events WHERE id = ?').pluck();
  const list = db.prepare<[number], { id: string; type: string; sent_at: number; received_at: number; data_json: string | null }>(
    'SELECT id, type, sent_at, received_at, data_json FROM webhook_events ORDER BY received_at DESC, id LIMIT ?',
  );
  const prune = db.prepare<{ staleBeforeSec: number; keepAfterMs: number; rows: number }>(
    `DELETE FROM webhook_events WHERE sent_at < :staleBeforeSec AND (received_at < :keepAfterMs
       OR id NOT IN (SELECT id FROM webhook_events ORDER BY received_at DESC, id LIMIT :rows))`,
  );
  let lastPrunedMs = -Infinity;
  const pruneWebhookEvents = (): number => {
    const now = nowMs();
    lastPrunedMs = now;
    return prune.run({
      staleBeforeSec: Math.floor(now / 1000) - WEBHOOK_TOLERANCE_SEC,
      keepAfterMs: now - WEBHOOK_EVENTS_KEEP_DAYS * 86_400_000,
      rows: WEBHOOK_EVENTS_KEEP_ROWS,
    }).changes;
  };
  return {
    /** Records an accepted delivery; false (and nothing written) when its id was recorded before: a replay. */
    recordWebhookEvent(e: WebhookEventRecord): boolean {
      const data = e.data === null || e.data === undefined ? null : JSON.stringify(e.data);
      const fresh = insert.run(e.id, e.type, e.sentAtSec, e.receivedAtMs, data).changes === 1;
      if (fresh && nowMs() - lastPrunedMs >= WEBHOOK_PRUNE_EVERY_MS) pruneWebhookEvents();
      return fresh;
    },
    /** Drops the deliveries past the retention (see createWebhookEvents); returns how many. */
    pruneWebhookEvents,
    /** True when a delivery with this id was accepted before. */
    webhookEventSeen(id: string): boolean {
      return seen.get(id) !== undefined;
    },
    /** The newest accepted deliveries first. */
    webhookEvents(limit = 100): WebhookEventRecord[] {
      return list.all(limit).map((r) => ({
        id: r.id,
        type: r.type,
        sentAtSec: r.sent_at,
        receivedAtMs: r.received_at,
        data: r.data_json === null ? null : (JSON.parse(r.data_json) as unknown),
      }));
    },
  };
}
