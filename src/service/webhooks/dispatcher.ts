import type { Database } from 'better-sqlite3';
import type { Agent, Dispatcher } from 'undici';
import type { Logger } from '../../shared/logger.js';
import { createWebhookStore, type DueDelivery } from '../store/webhooks.js';
import { WebhookError } from './errors.js';
import { eventBody, newEventId, type EventKind } from './events.js';
import { parseId } from './ids.js';
import { retryDelayMs } from './retry-policy.js';
import { sendDelivery, type SendOutcome } from './send.js';
import { webhookUrlProblem } from './url-policy.js';

/** Runs `fn` after `delayMs`; returns a function that cancels it. Injected so tests drive time. */
export type Schedule = (fn: () => void, delayMs: number) => () => void;

export type DispatcherOptions = {
  db: Database;
  logger: Logger;
  /** Deliver to loopback `http://` URLs; checked again at each attempt, so a restart without it stops them. */
  allowInsecure: boolean;
  /** @default Date.now */
  now?: () => number;
  /** @default an unref'd setTimeout */
  schedule?: Schedule;
  /** undici dispatcher for the POSTs. @default a private Agent, closed by stop() */
  dispatcher?: Dispatcher;
  /** @default 4 */
  concurrency?: number;
  /** Per attempt, connect to end of body. @default 10_000 */
  timeoutMs?: number;
  /** How long stop() lets in-flight deliveries finish before aborting them. @default 5_000 */
  stopTimeoutMs?: number;
};

export type WebhookDispatcher = {
  /** Durably queues one delivery per webhook of the dataset subscribed to `type`, then wakes the sender. Never throws. */
  emit(datasetId: number | string, type: EventKind, data: object): void;
  /** Sends a `webhook.test` event now, once (no retry, nothing queued). Throws WebhookError `not_found`. */
  test(datasetId: number | string, webhookId: number | string): Promise<{ delivered: boolean; status: number | null }>;
  /** Begins sending: due deliveries now, later ones when their time comes. */
  start(): void;
  /** Stops sending; waits for in-flight deliveries (bounded by stopTimeoutMs, then aborts them). */
  stop(): Promise<void>;
  /** Resolves when nothing is in flight and no wake-up is queued (tests, graceful hand-off). */
  idle(): Promise<void>;
  /** Deliveries being sent right now. */
  inFlight(): number;
};

/** Finished deliveries older than this are pruned at start(). */
const KEEP_FINISHED_MS = 30 * 24 * 3600 * 1000;
const MAX_TIMER_MS = 2 ** 31 - 1;

const defaultSchedule: Schedule = (fn, delayMs) => {
  const timer = setTimeout(fn, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * The webhook sender. Deliveries live in SQLite (`webhook_deliveries`) from `emit` until they are
 * delivered or failed, so a crash or restart loses none: an attempt interrupted by a crash is sent
 * again (at-least-once; receivers dedupe on `webhook-id`).
 */
export function createDispatcher(options: DispatcherOptions): WebhookDispatcher {
  const { db, logger, allowInsecure } = options;
  const now = options.now ?? Date.now;
  const schedule = options.schedule ?? defaultSchedule;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 5_000;
  const store = createWebhookStore(db);
  // undici (and so the Agent) loads at the first delivery, not at the service's start, which it would slow.
  let ownAgent: Promise<Agent> | null = null;
  const http = (): Promise<Dispatcher> =>
    options.dispatcher !== undefined
      ? Promise.resolve(options.dispatcher)
      : (ownAgent ??= import('undici').then(({ Agent }) => new Agent({ connect: { timeout: timeoutMs }, keepAliveTimeout: 4_000 })));
  const stopSignal = new AbortController();
  const inFlight = new Map<number, Promise<void>>();
  const idleWaiters: (() => void)[] = [];
  let state: 'new' | 'running' | 'stopped' = 'new';
  let wakeQueued = false;
  let cancelTimer: (() => void) | null = null;
  let stopping: Promise<void> | null = null;

  const send = async (target: { url: string; secret: string }, eventId: string, body: string): Promise<SendOutcome> =>
    sendDelivery(target, eventId, body, {
      dispatcher: await http(),
      timeoutMs,
      timestampSec: Math.floor(now() / 1000),
      signal: stopSignal.signal,
    });

  function settleIdle(): void {
    if (wakeQueued || inFlight.size > 0) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  }

  // Woken in a microtask, not synchronously: emit() may run inside the caller's transaction, and
  // nothing may be sent before that transaction has committed.
  function wake(): void {
    if (state !== 'running' || wakeQueued) return;
    wakeQueued = true;
    queueMicrotask(() => {
      wakeQueued = false;
      pump();
    });
  }

  // One clock reading per pump: claimDue takes what is due at `at`, armTimer waits for what comes after
  // it. Read twice, a delivery falling due between the two reads was neither sent nor waited for (a
  // timer that fires early, as Node's cached loop clock allows, on a busy machine).
  function pump(): void {
    try {
      if (state === 'running') {
        const at = now();
        claimDue(at);
        armTimer(at);
      }
    } catch (err) {
      logger.error({ err }, 'webhook queue unavailable');
    }
    settleIdle();
  }

  function claimDue(at: number): void {
    if (inFlight.size >= concurrency) return;
    for (const delivery of store.due(at, concurrency + inFlight.size)) {
      if (inFlight.size >= concurrency) break;
      if (inFlight.has(delivery.id)) continue;
      const done = attempt(delivery).finally(() => {
        inFlight.delete(delivery.id);
        pump();
      });
      inFlight.set(delivery.id, done);
    }
  }

  function armTimer(at: number): void {
    cancelTimer?.();
    cancelTimer = null;
    if (inFlight.size >= concurrency) return; // a finishing delivery pumps again
    const next = store.nextAttemptAfter(at);
    if (next !== null) cancelTimer = schedule(pump, next - at);
  }

  async function attempt(delivery: DueDelivery): Promise<void> {
    const number = delivery.attempt + 1;
    const refusal = webhookUrlProblem(delivery.url, allowInsecure);
    const outcome: SendOutcome | { kind: 'refused'; status: null; error: string } =
      refusal === null
        ? await send(delivery, delivery.eventId, delivery.body)
        : { kind: 'refused', status: null, error: 'url not allowed' };
    if (outcome.kind === 'aborted') return; // stopped mid-attempt: not counted, sent again after a restart
    try {
      record(delivery, number, outcome);
    } catch (err) {
      logger.error({ err, deliveryId: delivery.id }, 'webhook delivery not recorded');
    }
  }

  function record(delivery: DueDelivery, number: number, outcome: { kind: string; status: number | null; error: string | null }): void {
    const at = now();
    const row = { attempt: number, status: outcome.status, error: outcome.error, at: new Date(at).toISOString() };
    const context = {
      webhookId: delivery.webhookId,
      eventId: delivery.eventId,
      attempt: number,
      status: outcome.status,
      reason: outcome.error,
    };
    if (outcome.kind === 'delivered') {
      store.markDelivered(delivery.id, row, at);
      logger.debug(context, 'webhook delivered');
      return;
    }
    const delay = outcome.kind === 'refused' ? null : retryDelayMs(number);
    if (delay === null) {
      store.markFailed(delivery.id, row, at);
      logger.warn(context, 'webhook delivery failed');
    } else {
      store.markRetry(delivery.id, row, at + delay);
      logger.info({ ...context, retryInMs: delay }, 'webhook delivery will be retried');
    }
  }

  return {
    emit(datasetId, type, data) {
      try {
        const id = parseId(datasetId);
        if (id === null) return;
        const targets = store.targets(id).filter((w) => w.events.includes(type));
        if (targets.length === 0) return;
        const at = now();
        const eventId = newEventId();
        const createdAt = new Date(at).toISOString();
        const body = eventBody(type, createdAt, data);
        store.enqueue(targets.map((w) => ({ webhookId: w.id, eventId, type, body, nextAttemptAt: at, createdAt })));
        wake();
      } catch (err) {
        logger.error({ err, type }, 'webhook event not queued');
      }
    },

    async test(datasetId, webhookId) {
      const ds = parseId(datasetId);
      const id = parseId(webhookId);
      const target = ds === null || id === null ? null : store.getTarget(ds, id);
      if (target === null) throw new WebhookError('not_found', 'webhook not found');
      if (webhookUrlProblem(target.url, allowInsecure) !== null) return { delivered: false, status: null };
      const body = eventBody('webhook.test', new Date(now()).toISOString(), { webhook_id: target.id });
      const outcome = await send(target, newEventId(), body);
      logger.debug({ webhookId: target.id, status: outcome.status, reason: outcome.error }, 'webhook test sent');
      return { delivered: outcome.kind === 'delivered', status: outcome.status };
    },

    start() {
      if (state !== 'new') return;
      state = 'running';
      try {
        store.pruneFinished(new Date(now() - KEEP_FINISHED_MS).toISOString());
      } catch (err) {
        logger.error({ err }, 'webhook queue unavailable');
      }
      pump();
    },

    stop() {
      stopping ??= (async () => {
        state = 'stopped';
        cancelTimer?.();
        cancelTimer = null;
        const settled = Promise.allSettled(inFlight.values());
        if (!(await settlesWithin(settled, stopTimeoutMs))) {
          stopSignal.abort();
          await settled;
        }
        if (ownAgent !== null) await (await ownAgent).close();
        settleIdle();
      })();
      return stopping;
    },

    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },

    inFlight: () => inFlight.size,
  };
}

/** True if `promise` settles within `ms` (a real, unref'd timer: stop() must end even under a test clock). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}
