import { afterEach, describe, expect, it } from 'vitest';
import { webhookTestDb, type WebhookTestDb } from '../../helpers/webhook-db.js';
import { createWebhookStore, migrateWebhooks } from '../../../src/service/store/webhooks.js';

describe('migrateWebhooks', () => {
  let tdb: WebhookTestDb;
  afterEach(() => tdb.cleanup());

  it('is idempotent and keeps existing rows', () => {
    tdb = webhookTestDb();
    const db = tdb.open();
    const store = createWebhookStore(db);
    store.insertWithinLimit({ datasetId: 1, url: 'https://a.test/h', events: ['intelligence.processed'], secret: 's', createdAt: 'x' }, 10);

    migrateWebhooks(db);
    migrateWebhooks(db);

    expect(store.list(1)).toHaveLength(1);
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'webhook%' ORDER BY name`).pluck().all();
    expect(tables).toEqual(['webhook_deliveries', 'webhooks']);
  });

  it('refuses a delivery status outside pending/delivered/failed', () => {
    tdb = webhookTestDb();
    const db = tdb.open();
    const w = createWebhookStore(db).insertWithinLimit(
      { datasetId: 1, url: 'https://a.test/h', events: [], secret: 's', createdAt: 'x' },
      10,
    );

    const insert = () =>
      db
        .prepare(
          `INSERT INTO webhook_deliveries (webhook_id, event_id, type, body, next_attempt_at, status, created_at, updated_at)
                  VALUES (?, 'evt_1', 't', '{}', 0, 'sending', 'x', 'x')`,
        )
        .run(w?.id);

    expect(insert).toThrow(/CHECK constraint/);
  });

  it('enqueues an event once per webhook even if enqueued twice', () => {
    tdb = webhookTestDb();
    const store = createWebhookStore(tdb.open());
    const w = store.insertWithinLimit({ datasetId: 1, url: 'https://a.test/h', events: [], secret: 's', createdAt: 'x' }, 10);
    const row = { webhookId: w?.id ?? 0, eventId: 'evt_1', type: 't', body: '{}', nextAttemptAt: 5, createdAt: 'x' };

    store.enqueue([row]);
    store.enqueue([row]);

    expect(store.deliveriesFor(row.webhookId)).toHaveLength(1);
  });
});
