import type { Database } from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webhookTestDb, type WebhookTestDb } from '../../helpers/webhook-db.js';
import { signatureValid } from '../../helpers/webhook-harness.js';
import { closedPortUrl, startWebhookReceiver, type ReceivedDelivery, type WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { createDispatcher, type WebhookDispatcher } from '../../../src/service/webhooks/dispatcher.js';
import { WebhookError } from '../../../src/service/webhooks/errors.js';
import { createWebhook } from '../../../src/service/webhooks/registry.js';

let tdb: WebhookTestDb;
let db: Database;
let receiver: WebhookReceiver;
let dispatcher: WebhookDispatcher;

beforeEach(async () => {
  tdb = webhookTestDb();
  db = tdb.open();
  receiver = await startWebhookReceiver();
  // Long enough for a first delivery on a busy machine; the timeout's own test shortens it.
  dispatcher = createDispatcher({ db, logger: silentLogger(), allowInsecure: true, timeoutMs: 5000 });
});

afterEach(async () => {
  await dispatcher.stop();
  await receiver.close();
  tdb.cleanup();
});

describe('test()', () => {
  it('sends a signed webhook.test event now and reports a 2xx', async () => {
    const { webhook, secret } = createWebhook(db, { datasetId: 1, url: receiver.url }, { allowInsecure: true });

    const result = await dispatcher.test(1, String(webhook.id));

    expect(result).toEqual({ delivered: true, status: 200 });
    const [got] = receiver.received as [ReceivedDelivery];
    expect(JSON.parse(got.body)).toEqual({
      type: 'webhook.test',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      data: { webhook_id: webhook.id },
    });
    expect(signatureValid(secret, got)).toBe(true);
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
  });

  it.each([
    [500, { delivered: false, status: 500 }],
    [
      { status: 302, headers: { location: 'https://elsewhere.test/' } },
      { delivered: false, status: 302 },
    ],
    [201, { delivered: true, status: 201 }],
  ] as const)('reports reply %j as %j, once, and queues nothing', async (reply, expected) => {
    receiver.reply(reply);
    const { webhook } = createWebhook(db, { datasetId: 1, url: receiver.url }, { allowInsecure: true });

    const result = await dispatcher.test(1, webhook.id);

    expect(result).toEqual(expected);
    expect(receiver.received).toHaveLength(1);
    expect(db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get()).toBe(0);
  });

  it('reports status null for a closed port', async () => {
    const { webhook } = createWebhook(db, { datasetId: 1, url: await closedPortUrl() }, { allowInsecure: true });

    expect(await dispatcher.test(1, webhook.id)).toEqual({ delivered: false, status: null });
  });

  it('reports status null when the receiver does not answer within the timeout', async () => {
    receiver.reply('hold');
    const { webhook } = createWebhook(db, { datasetId: 1, url: receiver.url }, { allowInsecure: true });
    const quick = createDispatcher({ db, logger: silentLogger(), allowInsecure: true, timeoutMs: 200 });

    const result = await quick.test(1, webhook.id).finally(() => quick.stop());

    expect(result).toEqual({ delivered: false, status: null });
    expect(receiver.received).toHaveLength(1);
  });

  it("answers not_found for another dataset's webhook or an unknown id", async () => {
    const { webhook } = createWebhook(db, { datasetId: 2, url: receiver.url }, { allowInsecure: true });

    const errors = await Promise.all(
      [dispatcher.test(1, webhook.id), dispatcher.test(1, 999), dispatcher.test(1, 'x')].map((p) => p.catch((e: unknown) => e)),
    );

    expect(errors.map((e) => (e instanceof WebhookError ? e.code : e))).toEqual(['not_found', 'not_found', 'not_found']);
    expect(receiver.received).toEqual([]);
  });
});
