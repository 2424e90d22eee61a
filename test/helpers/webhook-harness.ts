import { createHmac } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { silentLogger, type Logger } from '../../src/shared/logger.js';
import { createWebhookStore, type DeliveryRecord } from '../../src/service/store/webhooks.js';
import { createDispatcher, createWebhook, type WebhookDispatcher } from '../../src/service/webhooks/index.js';
import type { Schedule } from '../../src/service/webhooks/dispatcher.js';
import { createManualClock, type ManualClock } from './manual-clock.js';
import { webhookTestDb, type WebhookTestDb } from './webhook-db.js';
import { startWebhookReceiver, type ReceivedDelivery, type WebhookReceiver } from './webhook-receiver.js';

export const HARNESS_T0 = Date.UTC(2025, 0, 1);

export type WebhookHarness = {
  tdb: WebhookTestDb;
  db: Database;
  clock: ManualClock;
  receiver: WebhookReceiver;
  /** A dispatcher on the manual clock (allowInsecure defaults to true); stopped by cleanup(). */
  dispatcher(options?: {
    db?: Database;
    allowInsecure?: boolean;
    logger?: Logger;
    stopTimeoutMs?: number;
    now?: () => number;
    schedule?: Schedule;
  }): WebhookDispatcher;
  /** Registers a webhook (dataset 1, the receiver's URL, all events unless given). */
  hook(url?: string, events?: string[], datasetId?: number): ReturnType<typeof createWebhook>;
  deliveries(webhookId: number, on?: Database): DeliveryRecord[];
  cleanup(): Promise<void>;
};

/** Temp database + manual clock + real receiver on 127.0.0.1 for dispatcher tests. */
export async function webhookHarness(): Promise<WebhookHarness> {
  const tdb = webhookTestDb();
  const db = tdb.open();
  const clock = createManualClock(HARNESS_T0);
  const receiver = await startWebhookReceiver();
  const started: WebhookDispatcher[] = [];
  return {
    tdb,
    db,
    clock,
    receiver,
    dispatcher(options = {}) {
      const d = createDispatcher({
        db: options.db ?? db,
        logger: options.logger ?? silentLogger(),
        allowInsecure: options.allowInsecure ?? true,
        now: options.now ?? clock.now,
        schedule: options.schedule ?? clock.schedule,
        ...(options.stopTimeoutMs === undefined ? {} : { stopTimeoutMs: options.stopTimeoutMs }),
      });
      started.push(d);
      return d;
    },
    hook: (url = receiver.url, events, datasetId = 1) => createWebhook(db, { datasetId, url, events }, { allowInsecure: true }),
    deliveries: (webhookId, on = db) => createWebhookStore(on).deliveriesFor(webhookId),
    async cleanup() {
      await Promise.all(started.splice(0).map((d) => d.stop()));
      await receiver.close();
      tdb.cleanup();
    },
  };
}

/** Independent Standard Webhooks check written from docs/api.md with node:crypto (not the code under test). */
export function signatureValid(secret: string, delivery: ReceivedDelivery): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig } = delivery.headers;
  const expected = createHmac('sha256', key)
    .update(`${String(id)}.${String(ts)}.${delivery.body}`)
    .digest('base64');
  return sig === `v1,${expected}`;
}
