export { createDispatcher, type DispatcherOptions, type Schedule, type WebhookDispatcher } from './dispatcher.js';
export { WebhookError, type WebhookErrorCode } from './errors.js';
export { WEBHOOK_EVENT_KINDS, isEventKind, type DeliveryType, type EventKind } from './events.js';
export { MAX_WEBHOOKS_PER_DATASET, createWebhook, getWebhook, listWebhooks, type CreateWebhookInput, type Webhook } from './registry.js';
export { MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_MS } from './retry-policy.js';
export { generateWebhookSecret } from './signature.js';
