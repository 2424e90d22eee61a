export { createDispatcher, type WebhookDispatcher } from './dispatcher.js';
export { createWebhook, getWebhook, listWebhooks } from './registry.js';
