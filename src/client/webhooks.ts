import type { Http } from './http.js';
import * as S from './schemas.js';
import type { Webhook, WebhookEvent } from './types.js';

/** Webhook endpoints (v2): register, list, send a test delivery. All free. */

export interface WebhookMethods {
  createWebhook(b: { url: string; events?: WebhookEvent[] }): Promise<Webhook & { secret: string }>;
  listWebhooks(): Promise<Webhook[]>;
  testWebhook(id: string): Promise<{ delivered: boolean; status: number | null }>;
}

/** The webhook methods of a client bound to `http`. */
export function webhookMethods(http: Http): WebhookMethods {
  return {
    // Each POST makes a new webhook (at most 10): free, but sent once; a lost answer is unknown_outcome.
    createWebhook: (b) =>
      http.call({ method: 'POST', api: 'v2', path: '/webhooks', kind: 'once', json: { url: b.url, events: b.events } }, S.WebhookCreated),
    listWebhooks: () => http.call({ method: 'GET', api: 'v2', path: '/webhooks', kind: 'idempotent' }, S.WebhookList),
    // A test delivery is a harmless ping: retried like a read.
    testWebhook: (id) =>
      http.call(
        {
          method: 'POST',
          api: 'v2',
          path: `/webhooks/${encodeURIComponent(id)}/test`,
          route: '/webhooks/{id}/test',
          kind: 'idempotent',
          json: {},
        },
        S.WebhookTest,
      ),
  };
}
