import { reply, type Routes } from '../routing.js';
import { notFound } from '../../service-error.js';
import { createWebhook, getWebhook, listWebhooks } from '../../webhooks/index.js';
import type { ServiceContext } from '../context.js';
import { lazySchemas, parseBody, parseIdParam } from '../request.js';
import { V2 } from './paths.js';

// The URL policy (HTTPS only, loopback HTTP with --allow-insecure-webhooks) and the event kinds are
// checked by the webhooks module (422); here only the JSON types. Strict: a mistyped `events` would
// silently subscribe to every kind (docs/service.md).
const webhookCreate = lazySchemas((z) => z.strictObject({ url: z.string().min(1).max(2_048), events: z.array(z.string()).optional() }));

/** Webhooks: register (secret shown once), list, test delivery. */
export function registerWebhookRoutes(app: Routes, ctx: ServiceContext): void {
  const { db } = ctx;

  app.post(`${V2}/webhooks`, async (req) => {
    const { datasetId } = req.auth;
    const body = parseBody(await webhookCreate(), req.body);
    const { webhook, secret } = createWebhook(
      db,
      { datasetId, url: body.url, events: body.events },
      { allowInsecure: ctx.allowInsecureWebhooks, now: ctx.clock },
    );
    return reply(201, { ...webhook, secret });
  });

  app.get(`${V2}/webhooks`, async (req) => {
    return { webhooks: listWebhooks(db, req.auth.datasetId) };
  });

  app.post(`${V2}/webhooks/:webhook_id/test`, async (req) => {
    const { datasetId } = req.auth;
    const id = parseIdParam(req.params['webhook_id'], 'webhook');
    if (getWebhook(db, datasetId, id) === null) throw notFound('webhook');
    return ctx.webhooks.test(datasetId, id);
  });
}
