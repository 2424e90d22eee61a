import { sha256Hex } from '../../shared/sha256.js';
import type { OnCharged } from '../billing/charge.js';
import { ServiceError } from '../service-error.js';
import { completeIdempotency, findIdempotency, insertInProgress, releaseInProgress } from '../store/idempotency.js';
import type { ServiceContext } from './context.js';
import { reply, type ApiRequest, type Handler } from './routing.js';
import { writeTransaction } from '../store/write-transaction.js';

/** How long a stored response answers repeats of its key. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** One request's hold on its `Idempotency-Key`. */
export type IdempotencyHandle = {
  datasetId: number;
  key: string;
  /** The request's fingerprint; for uploads it is known only after the file has streamed. */
  fingerprint: string | null;
  /** True when this request inserted the `in_progress` row (and so must release it on failure). */
  owned: boolean;
  completed: boolean;
  /** Uploads only: the finished earlier request with this key, to compare once the file is read. */
  previous: { fingerprint: string; status: number; body: unknown } | null;
  /** Stores the response inside the charge's transaction. */
  onCharged: OnCharged;
};

/** Marks an answer given again from the stored response of an earlier request with the same key. */
const REPLAYED = { 'idempotent-replayed': 'true' };

export type HandlerResult = { status: number; body: unknown; replayed?: boolean };

/** The request's `Idempotency-Key`, or undefined; longer than 255 characters is a 400. */
function idempotencyKeyOf(req: ApiRequest): string | undefined {
  const raw = req.headers['idempotency-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || key === '') return undefined;
  if (key.length > 255) throw new ServiceError('invalid_request', 'Idempotency-Key: at most 255 characters');
  return key;
}

/** Method, path (no query, no trailing slash) and the hash of the parsed JSON body. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  const path = (url.split('?')[0] ?? '').replace(/\/+$/, '');
  return sha256Hex(`${method} ${path}\n${sha256Hex(JSON.stringify(body ?? null))}`);
}

type Claim = { kind: 'replay'; status: number; body: unknown } | { kind: 'run'; handle: IdempotencyHandle | null };

function claim(ctx: ServiceContext, datasetId: number, key: string | undefined, fingerprint: string | null): Claim {
  if (key === undefined) return { kind: 'run', handle: null };
  return writeTransaction(ctx.db, (): Claim => {
    const row = findIdempotency(ctx.db, datasetId, key, ctx.clock() - IDEMPOTENCY_TTL_MS);
    if (row?.state === 'in_progress') {
      throw new ServiceError('idempotency_in_progress', 'a request with this Idempotency-Key is still running');
    }
    const handle: IdempotencyHandle = {
      datasetId,
      key,
      fingerprint,
      owned: false,
      completed: false,
      previous: null,
      onCharged: (response) => {
        completeIdempotency(ctx.db, {
          datasetId,
          key,
          fingerprint: handle.fingerprint ?? '',
          status: response.status,
          body: response.body,
        });
        handle.completed = true;
      },
    };
    if (row !== undefined) {
      const previous = {
        fingerprint: row.fingerprint ?? '',
        status: row.status ?? 200,
        body: JSON.parse(row.body_json ?? 'null') as unknown,
      };
      if (fingerprint === null) {
        handle.previous = previous;
        return { kind: 'run', handle };
      }
      if (previous.fingerprint !== fingerprint) {
        throw new ServiceError('idempotency_mismatch', 'this Idempotency-Key was used for a different request');
      }
      return { kind: 'replay', status: previous.status, body: previous.body };
    }
    insertInProgress(ctx.db, { datasetId, key, fingerprint, nowMs: ctx.clock() });
    handle.owned = true;
    return { kind: 'run', handle };
  })();
}

/**
 * For an upload, once the file's fingerprint is known: the earlier response to replay, or null to
 * go on. A different request under the same key is a 422.
 */
export function resolveDeferred(handle: IdempotencyHandle | null, fingerprint: string): HandlerResult | null {
  if (handle === null) return null;
  if (handle.previous !== null) {
    if (handle.previous.fingerprint !== fingerprint) {
      throw new ServiceError('idempotency_mismatch', 'this Idempotency-Key was used for a different request');
    }
    return { status: handle.previous.status, body: handle.previous.body, replayed: true };
  }
  handle.fingerprint = fingerprint;
  return null;
}

/**
 * Wraps a paid route: honours `Idempotency-Key` (replay, 409 while running, 422 on a different
 * request), runs the handler, and releases the key when the handler did not complete.
 * `deferred`: the fingerprint is computed by the handler (uploads).
 */
export function idempotent(
  ctx: ServiceContext,
  handler: (req: ApiRequest, idem: IdempotencyHandle | null) => Promise<HandlerResult>,
  opts: { deferred?: boolean } = {},
): Handler {
  return async (req) => {
    const { datasetId } = req.auth;
    const key = idempotencyKeyOf(req);
    const fingerprint = opts.deferred === true ? null : requestFingerprint(req.method, req.url, req.body);
    const c = claim(ctx, datasetId, key, fingerprint);
    if (c.kind === 'replay') return reply(c.status, c.body, REPLAYED);
    try {
      const result = await handler(req, c.handle);
      return reply(result.status, result.body, result.replayed === true ? REPLAYED : {});
    } finally {
      if (c.handle?.owned === true && !c.handle.completed) releaseInProgress(ctx.db, datasetId, c.handle.key);
    }
  };
}
