import { nodeCrypto } from '../../shared/crypto.js';
import { WEBHOOK_EVENT_KINDS, type WebhookEventKind } from '../../shared/webhooks.js';

export { WEBHOOK_EVENT_KINDS } from '../../shared/webhooks.js';
export type EventKind = WebhookEventKind;

/** What a delivery's body `type` can be: a subscribable kind, or the test event sent by `/test`. */
export type DeliveryType = EventKind | 'webhook.test';

/** True when `value` is one of the subscribable event kinds. */
export function isEventKind(value: unknown): value is EventKind {
  return typeof value === 'string' && (WEBHOOK_EVENT_KINDS as readonly string[]).includes(value);
}

/** A new event id (`evt_` + 22 url-safe characters); it is the `webhook-id` of every attempt. */
export function newEventId(): string {
  return `evt_${nodeCrypto().randomBytes(16).toString('base64url')}`;
}

/** The exact body bytes of a delivery (docs/api.md): `{"type","created_at","data"}`, in that order. */
export function eventBody(type: DeliveryType, createdAt: string, data: object): string {
  return JSON.stringify({ type, created_at: createdAt, data });
}
