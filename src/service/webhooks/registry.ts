import type { Database } from 'better-sqlite3';
import { createWebhookStore, type StoredWebhook } from '../store/webhooks.js';
import { WebhookError } from './errors.js';
import { isEventKind, WEBHOOK_EVENT_KINDS, type EventKind } from './events.js';
import { parseId } from './ids.js';
import { generateWebhookSecret } from './signature.js';
import { webhookUrlProblem } from './url-policy.js';

/** At most this many webhooks per user; a dataset-scoped key is the user here (spec section 8). */
export const MAX_WEBHOOKS_PER_DATASET = 10;

/** A webhook as the API shows it (docs/api.md); never carries the secret. */
export type Webhook = { id: number; url: string; events: EventKind[]; created_at: string };

export type CreateWebhookInput = { datasetId: number | string; url: string; events?: readonly string[] | undefined };

function toPublic(stored: StoredWebhook): Webhook {
  return { id: stored.id, url: stored.url, events: stored.events.filter(isEventKind), created_at: stored.createdAt };
}

function datasetKey(datasetId: number | string): number {
  const id = parseId(datasetId);
  if (id === null) throw new WebhookError('not_found', 'dataset not found');
  return id;
}

/** The subscribed kinds, in canonical order; all kinds when none are given. */
function normaliseEvents(events: unknown): EventKind[] {
  if (events === undefined || events === null) return [...WEBHOOK_EVENT_KINDS];
  if (!Array.isArray(events) || events.length === 0) {
    throw new WebhookError('validation_failed', `events must be a non-empty list of: ${WEBHOOK_EVENT_KINDS.join(', ')}`);
  }
  const unknown = events.filter((e) => !isEventKind(e));
  if (unknown.length > 0) {
    const shown = unknown.map((e) => (typeof e === 'string' ? JSON.stringify(e) : typeof e)).join(', ');
    throw new WebhookError('validation_failed', `unknown event kind(s) ${shown}; known: ${WEBHOOK_EVENT_KINDS.join(', ')}`);
  }
  return WEBHOOK_EVENT_KINDS.filter((kind) => events.includes(kind));
}

/**
 * Registers a webhook for the dataset and returns it with its signing secret (the only time the
 * secret is shown). Throws WebhookError `validation_failed` (bad URL or events) or `limit_reached`.
 */
export function createWebhook(
  db: Database,
  input: CreateWebhookInput,
  options: { allowInsecure: boolean; now?: () => number },
): { webhook: Webhook; secret: string } {
  const datasetId = datasetKey(input.datasetId);
  const problem = webhookUrlProblem(input.url, options.allowInsecure);
  if (problem !== null) throw new WebhookError('validation_failed', problem);
  const events = normaliseEvents(input.events);
  const secret = generateWebhookSecret();
  const createdAt = new Date((options.now ?? Date.now)()).toISOString();

  const stored = createWebhookStore(db).insertWithinLimit(
    { datasetId, url: input.url, events, secret, createdAt },
    MAX_WEBHOOKS_PER_DATASET,
  );

  if (stored === null) {
    throw new WebhookError('limit_reached', `at most ${MAX_WEBHOOKS_PER_DATASET} webhooks per dataset`);
  }
  return { webhook: toPublic(stored), secret };
}

/** The dataset's webhooks, oldest first, without secrets. */
export function listWebhooks(db: Database, datasetId: number | string): Webhook[] {
  const id = parseId(datasetId);
  return id === null ? [] : createWebhookStore(db).list(id).map(toPublic);
}

/** One of the dataset's webhooks (no secret), or null when it is missing or another dataset's. */
export function getWebhook(db: Database, datasetId: number | string, webhookId: number | string): Webhook | null {
  const ds = parseId(datasetId);
  const id = parseId(webhookId);
  if (ds === null || id === null) return null;
  const stored = createWebhookStore(db).get(ds, id);
  return stored ? toPublic(stored) : null;
}
