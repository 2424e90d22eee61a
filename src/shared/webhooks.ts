import { nodeCrypto } from './crypto.js';

/** The event kinds a webhook can subscribe to (spec section 6), for the service and the client alike. */
export const WEBHOOK_EVENT_KINDS = [
  'intelligence.processed',
  'intelligence.failed',
  'intelligence.deduped',
  'dataset.mode_changed',
] as const;

/** A subscribable event kind. */
export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];

/**
 * Standard Webhooks signatures (docs/api.md), one implementation for both ends: the local service signs
 * its deliveries with it and the client checks deliveries with it, so the two cannot drift apart.
 * `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`, the key being the
 * base64 part of a `whsec_` secret.
 */

/** The prefix of a signing secret: `whsec_` + base64 of the key. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The HMAC key of a `whsec_` secret (a bare base64 string is accepted too), or null when it is empty. */
export function webhookSecretKey(secret: string): Buffer | null {
  const key = Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
  return key.length === 0 ? null : key;
}

/** The raw HMAC-SHA256 of one delivery: `timestamp` exactly as sent (a header's text, or unix seconds). */
export function webhookMac(key: Buffer, id: string, timestamp: string | number, body: string | Buffer): Buffer {
  return nodeCrypto().createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The `webhook-signature` value (`v1,<base64>`) for one delivery. Throws on an empty secret. */
export function signWebhook(secret: string, id: string, timestampSec: number, body: string | Buffer): string {
  const key = webhookSecretKey(secret);
  if (key === null) throw new RangeError('empty webhook secret');
  return `v1,${webhookMac(key, id, timestampSec, body).toString('base64')}`;
}
