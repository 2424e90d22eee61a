import { verifyWebhook, type VerifyFailure, type WebhookHeaders } from '../../client/webhook-verify.js';
import { isRecord } from '../../config/is-record.js';
import type { Logger } from '../../shared/logger.js';
import type { StateStore } from '../../sync/state/index.js';

/** How a delivery ended: accepted, or why it was refused. */
export type WebhookOutcome = 'accepted' | VerifyFailure | 'replayed' | 'invalid_body';

export type WebhookAnswer = { status: number; outcome: WebhookOutcome; body: Record<string, unknown> };

export type WebhookDeps = {
  /** `watch.webhookSecret` (`whsec_...`). Never logged. */
  secret: string;
  store: Pick<StateStore, 'recordWebhookEvent' | 'webhookEventSeen' | 'setEntryStatus'>;
  nowMs: () => number;
  logger?: Logger;
};

const STATUS: Record<Exclude<WebhookOutcome, 'accepted'>, number> = {
  missing_header: 400,
  invalid_timestamp: 400,
  invalid_body: 400,
  stale_timestamp: 401,
  bad_signature: 401,
  invalid_secret: 500,
  replayed: 409,
};

/** Kinds whose `data` the state keeps (docs/api.md): the rest (`webhook.test`) keep only their id. */
function isRecordedKind(type: string): boolean {
  return type.startsWith('intelligence.') || type === 'dataset.mode_changed';
}

/**
 * One delivery to the daemon's POST /webhooks: the Standard Webhooks signature checked with the client's
 * verifier (a timestamp more than 300 s away is stale), an id accepted before refused as a replay (the
 * ids live in the state, so also after a restart), then the event recorded in the state. Nothing about
 * the delivery is trusted before its signature is: a forged one writes nothing.
 */
export function receiveWebhook(deps: WebhookDeps, headers: WebhookHeaders, body: Buffer): WebhookAnswer {
  const nowMs = deps.nowMs();
  const verdict = verifyWebhook({ headers, body, secret: deps.secret, nowSec: Math.floor(nowMs / 1000) });
  const refuse = (outcome: Exclude<WebhookOutcome, 'accepted'>, id: string | null): WebhookAnswer => {
    deps.logger?.warn({ outcome, webhookId: id }, 'webhook delivery refused');
    return { status: STATUS[outcome], outcome, body: { error: outcome } };
  };
  if (!verdict.ok) return refuse(verdict.reason, null);
  if (deps.store.webhookEventSeen(verdict.id)) return refuse('replayed', verdict.id);
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    return refuse('invalid_body', verdict.id);
  }
  if (!isRecord(event) || typeof event.type !== 'string' || event.type === '') return refuse('invalid_body', verdict.id);
  const recorded = isRecordedKind(event.type);
  const fresh = deps.store.recordWebhookEvent({
    id: verdict.id,
    type: event.type,
    sentAtSec: verdict.timestamp,
    receivedAtMs: nowMs,
    data: recorded ? (event.data ?? null) : null,
  });
  if (!fresh) return refuse('replayed', verdict.id);
  const entries = updateEntryStatus(deps.store, event.type, event.data);
  deps.logger?.info({ webhookId: verdict.id, type: event.type, recorded, entries }, 'webhook delivery accepted');
  return { status: 200, outcome: 'accepted', body: { status: 'accepted', recorded } };
}

/** The entry status an `intelligence.*` event reports (`deduped` reports none: the entry keeps its own). */
const ENTRY_STATUS: Record<string, 'processed' | 'failed'> = { 'intelligence.processed': 'processed', 'intelligence.failed': 'failed' };

/**
 * An `intelligence.processed` or `intelligence.failed` event sets the status (and the service's reason)
 * of the entry it names in the state, so `kbsync status` and the next plan see it without a listing.
 * Returns how many tracked entries changed (0 for an entry kbsync did not write, or another kind).
 */
function updateEntryStatus(store: Pick<StateStore, 'setEntryStatus'>, type: string, data: unknown): number {
  const status = ENTRY_STATUS[type];
  if (status === undefined || !isRecord(data)) return 0;
  const id = data.entry_id;
  if (typeof id !== 'number' && typeof id !== 'string') return 0;
  const error = status === 'failed' && typeof data.error === 'string' ? data.error : null;
  return store.setEntryStatus(String(id), status, error);
}
