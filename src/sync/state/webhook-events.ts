import type { Database } from 'better-sqlite3';

/** One webhook delivery the daemon accepted. */
export type WebhookEventRecord = {
  /** The `webhook-id` header. */
  id: string;
  /** The body's `type` (`intelligence.processed`, `dataset.mode_changed`, `webhook.test`...). */
  type: string;
  /** The `webhook-timestamp` header, unix seconds. */
  sentAtSec: number;
  receivedAtMs: number;
  /** The body's `data` for the recorded kinds, else null. */
  data: unknown;
};

/** The `webhook_events` table: accepted deliveries, whose ids refuse replays. */
export function createWebhookEvents(db: Database) {
  const insert = db.prepare<[string, string, number, number, string | null]>(
    'INSERT INTO webhook_events (id, type, sent_at, received_at, data_json) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
  );
  const seen = db.prepare<[string], number>('SELECT 1 FROM webhook_events WHERE id = ?').pluck();
  const list = db.prepare<[number], { id: string; type: string; sent_at: number; received_at: number; data_json: string | null }>(
    'SELECT id, type, sent_at, received_at, data_json FROM webhook_events ORDER BY received_at DESC, id LIMIT ?',
  );
  return {
    /** Records an accepted delivery; false (and nothing written) when its id was recorded before: a replay. */
    recordWebhookEvent(e: WebhookEventRecord): boolean {
      const data = e.data === null || e.data === undefined ? null : JSON.stringify(e.data);
      return insert.run(e.id, e.type, e.sentAtSec, e.receivedAtMs, data).changes === 1;
    },
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
