import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/client/webhook-verify.js';
import { silentLogger } from '../../src/shared/logger.js';
import { createDispatcher, createWebhook, type WebhookDispatcher } from '../../src/service/webhooks/index.js';
import { signWebhook } from '../../src/shared/webhooks.js';
import { webhookTestDb, type WebhookTestDb } from '../helpers/webhook-db.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

// The service signs, the client verifies: both sides of docs/api.md's "Chosen signature scheme" agree.
let tdb: WebhookTestDb;
let receiver: WebhookReceiver;
let dispatcher: WebhookDispatcher | undefined;

beforeEach(async () => {
  tdb = webhookTestDb();
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await dispatcher?.stop();
  dispatcher = undefined;
  await receiver.close();
  tdb.cleanup();
});

describe('service deliveries verified by the client verifier', () => {
  it('accepts an emitted event and a test event, and rejects a tampered body or another secret', async () => {
    const db = tdb.open();
    const { secret } = createWebhook(db, { datasetId: 1, url: receiver.url }, { allowInsecure: true });
    const other = createWebhook(db, { datasetId: 1, url: `${receiver.url}/x`, events: ['intelligence.failed'] }, { allowInsecure: true });
    const d = createDispatcher({ db, logger: silentLogger(), allowInsecure: true });
    dispatcher = d;
    d.start();

    d.emit(1, 'intelligence.processed', { entry_id: 5, dataset_id: 1, agent_id: 2, sha256: 'ff' });
    await d.idle();
    await d.test(1, 1);

    expect(receiver.received).toHaveLength(2);
    for (const d of receiver.received) {
      expect(verifyWebhook({ headers: d.headers, body: d.body, secret })).toEqual({
        ok: true,
        id: d.headers['webhook-id'],
        timestamp: Number(d.headers['webhook-timestamp']),
      });
      expect(verifyWebhook({ headers: d.headers, body: `${d.body} `, secret })).toEqual({ ok: false, reason: 'bad_signature' });
      expect(verifyWebhook({ headers: d.headers, body: d.body, secret: other.secret })).toEqual({ ok: false, reason: 'bad_signature' });
      expect(verifyWebhook({ headers: d.headers, body: d.body, secret: [other.secret, secret] })).toMatchObject({ ok: true });
    }
  });

  it('the signer and the client verifier agree on the Standard Webhooks test vector', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    };

    expect(verifyWebhook({ headers, body: '{"test": 2432232314}', secret, nowSec: 1614265330 })).toMatchObject({ ok: true });
  });
});
