import type { Database } from 'better-sqlite3';
import { writeTransaction } from './write-transaction.js';

/**
 * The webhook tables of the service database: registered endpoints and the durable delivery queue.
 * All SQL about webhooks lives here; `src/service/webhooks/` holds the rules and the sending.
 *
 * Times: `created_at`/`updated_at` are ISO-8601 UTC text; `next_attempt_at` is unix milliseconds
 * (an integer, so "due" is one indexed comparison).
 */

/** Creates the webhook tables and indexes if they are missing (safe to run on every start). */
export function migrateWebhooks(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS webhooks (
      id INTEGER PRIMARY KEY,
      dataset_id INTEGER NOT NULL,
      url TEXT NOT NULL,
      events_json TEXT NOT NULL,
      secret TEXT NOT NULL,
      created_at TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS webhooks_by_dataset ON webhooks (dataset_id);
    CREATE TABLE IF NOT EXISTS webhook_deliveries (
      id INTEGER PRIMARY KEY,
      webhook_id INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      event_id TEXT NOT NULL,
      type TEXT NOT NULL,
      body TEXT NOT NULL,
      attempt INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER NOT NULL,
      status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      last_status INTEGER,
      last_error TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      UNIQUE (webhook_id, event_id)
    );
    CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
  `);
}

/** A registered webhook as it may be shown (no secret). */
export type StoredWebhook = { id: number; datasetId: number; url: string; events: string[]; createdAt: string };
/** What the sender needs: where to post and how to sign. */
export type WebhookTarget = StoredWebhook & { secret: string };
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type NewDelivery = { webhookId: number; eventId: string; type: string; body: string; nextAttemptAt: number; createdAt: string };
/** A pending delivery whose time has come, joined with its webhook. */
export type DueDelivery = {
  id: number;
  webhookId: number;
  eventId: string;
  type: string;
  body: string;
  attempt: number;
  url: string;
  secret: string;
};
export type DeliveryRecord = {
  id: number;
  webhookId: number;
  eventId: string;
  type: string;
  body: string;
  attempt: number;
  nextAttemptAt: number;
  status: DeliveryStatus;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
};
/** The outcome of one attempt, written to the delivery's row. */
export type AttemptRecord = { attempt: number; status: number | null; error: string | null; at: string };

type WebhookRow = { id: number; dataset_id: number; url: string; events_json: string; created_at: string };
type DeliveryRow = {
  id: number;
  webhook_id: number;
  event_id: string;
  type: string;
  body: string;
  attempt: number;
  next_attempt_at: number;
  status: DeliveryStatus;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
};

const PUBLIC_COLUMNS = 'id, dataset_id, url, events_json, created_at';

function toWebhook(row: WebhookRow): StoredWebhook {
  return {
    id: row.id,
    datasetId: row.dataset_id,
    url: row.url,
    events: JSON.parse(row.events_json) as string[],
    createdAt: row.created_at,
  };
}

function toDelivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    type: row.type,
    body: row.body,
    attempt: row.attempt,
    nextAttemptAt: row.next_attempt_at,
    status: row.status,
    lastStatus: row.last_status,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Webhook queries over one open database (statements prepared once). */
export function createWebhookStore(db: Database) {
  const count = db.prepare<[number], number>('SELECT COUNT(*) FROM webhooks WHERE dataset_id = ?').pluck();
  const insert = db.prepare<[number, string, string, string, string]>(
    'INSERT INTO webhooks (dataset_id, url, events_json, secret, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const list = db.prepare<[number], WebhookRow>(`SELECT ${PUBLIC_COLUMNS} FROM webhooks WHERE dataset_id = ? ORDER BY id`);
  const get = db.prepare<[number, number], WebhookRow>(`SELECT ${PUBLIC_COLUMNS} FROM webhooks WHERE dataset_id = ? AND id = ?`);
  const getTarget = db.prepare<[number, number], WebhookRow & { secret: string }>(
    `SELECT ${PUBLIC_COLUMNS}, secret FROM webhooks WHERE dataset_id = ? AND id = ?`,
  );
  const targets = db.prepare<[number], WebhookRow & { secret: string }>(
    `SELECT ${PUBLIC_COLUMNS}, secret FROM webhooks WHERE dataset_id = ? ORDER BY id`,
  );
  const enqueueOne = db.prepare<[number, string, string, string, number, string, string]>(
    `INSERT OR IGNORE INTO webhook_deliveries (webhook_id, event_id, type, body, attempt, next_attempt_at, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, 0, ?, 'pending', ?, ?)`,
  );
  const due = db.prepare<[number, number], DueDelivery>(
    `SELECT d.id, d.webhook_id AS webhookId, d.event_id AS eventId, d.type, d.body, d.attempt, w.url, w.secret
     FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.status = 'pending' AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at, d.id LIMIT ?`,
  );
  const nextAfter = db
    .prepare<[number], number | null>(
      `SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?`,
    )
    .pluck();
  const finish = db.prepare<[DeliveryStatus, number, number | null, string | null, number, string, number]>(
    `UPDATE webhook_deliveries SET status = ?, attempt = ?, last_status = ?, last_error = ?, next_attempt_at = ?, updated_at = ?
     WHERE id = ?`,
  );
  const forWebhook = db.prepare<[number], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id');
  const prune = db.prepare<[string]>(`DELETE FROM webhook_deliveries WHERE status != 'pending' AND updated_at < ?`);

  const insertWithinLimit = writeTransaction(
    db,
    (input: { datasetId: number; url: string; events: string[]; secret: string; createdAt: string }, max: number): StoredWebhook | null => {
      if ((count.get(input.datasetId) ?? 0) >= max) return null;
      const { lastInsertRowid } = insert.run(input.datasetId, input.url, JSON.stringify(input.events), input.secret, input.createdAt);
      return { id: Number(lastInsertRowid), datasetId: input.datasetId, url: input.url, events: input.events, createdAt: input.createdAt };
    },
  );
  const enqueueAll = writeTransaction(db, (deliveries: readonly NewDelivery[]) => {
    for (const d of deliveries) enqueueOne.run(d.webhookId, d.eventId, d.type, d.body, d.nextAttemptAt, d.createdAt, d.createdAt);
  });

  return {
    /** Inserts the webhook unless the dataset already has `max`; null when the limit is reached. */
    insertWithinLimit: (input: { datasetId: number; url: string; events: string[]; secret: string; createdAt: string }, max: number) =>
      insertWithinLimit(input, max),
    list: (datasetId: number): StoredWebhook[] => list.all(datasetId).map(toWebhook),
    get: (datasetId: number, id: number): StoredWebhook | null => {
      const row = get.get(datasetId, id);
      return row ? toWebhook(row) : null;
    },
    /** The webhook with its signing secret, for sending only. */
    getTarget: (datasetId: number, id: number): WebhookTarget | null => {
      const row = getTarget.get(datasetId, id);
      return row ? { ...toWebhook(row), secret: row.secret } : null;
    },
    targets: (datasetId: number): WebhookTarget[] => targets.all(datasetId).map((row) => ({ ...toWebhook(row), secret: row.secret })),
    /** Inserts all deliveries in one transaction (nested in the caller's transaction if there is one). */
    enqueue: (deliveries: readonly NewDelivery[]): void => enqueueAll(deliveries),
    due: (nowMs: number, limit: number): DueDelivery[] => due.all(nowMs, limit),
    /** The earliest `next_attempt_at` of a pending delivery later than `afterMs`, or null. */
    nextAttemptAfter: (afterMs: number): number | null => nextAfter.get(afterMs) ?? null,
    markDelivered: (id: number, r: AttemptRecord, nowMs: number): void => {
      finish.run('delivered', r.attempt, r.status, null, nowMs, r.at, id);
    },
    markRetry: (id: number, r: AttemptRecord, nextAttemptAt: number): void => {
      finish.run('pending', r.attempt, r.status, r.error, nextAttemptAt, r.at, id);
    },
    markFailed: (id: number, r: AttemptRecord, nowMs: number): void => {
      finish.run('failed', r.attempt, r.status, r.error, nowMs, r.at, id);
    },
    deliveriesFor: (webhookId: number): DeliveryRecord[] => forWebhook.all(webhookId).map(toDelivery),
    /** Deletes finished (delivered or failed) deliveries last updated before `beforeIso`; returns how many. */
    pruneFinished: (beforeIso: string): number => prune.run(beforeIso).changes,
  };
}
