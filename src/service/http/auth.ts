import type { IncomingHttpHeaders } from 'node:http';
import { hashApiKey } from '../keys.js';
import { datasetIdOfKeyHash } from '../store/api-keys.js';
import { getDataset } from '../store/datasets.js';
import type { ServiceContext } from './context.js';
import { ServiceError, notFound } from '../service-error.js';
import type { RateLimiter } from './rate-limit.js';
import type { AuthInfo } from './request.js';

/** The raw key from `X-API-Key` or `Authorization: Bearer`, or undefined. */
function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  const direct = Array.isArray(header) ? header[0] : header;
  if (direct !== undefined && direct.trim() !== '') return direct.trim();
  const authorization = headers.authorization;
  const match = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}

/**
 * Authenticates an API request before its body is read: the key names one dataset; a `dataset_id`
 * query parameter naming another answers 404 (given twice, 400); then the optional rate limit.
 */
export function authenticate(
  ctx: ServiceContext,
  limiter: RateLimiter | null,
  headers: IncomingHttpHeaders,
  query: Readonly<Record<string, unknown>>,
): AuthInfo {
  const key = presentedKey(headers);
  if (key === undefined) throw new ServiceError('unauthorized', 'missing API key (send X-API-Key)');
  const keyHash = hashApiKey(key);
  const datasetId = datasetIdOfKeyHash(ctx.db, keyHash);
  const dataset = datasetId === undefined ? undefined : getDataset(ctx.db, datasetId);
  if (dataset === undefined) throw new ServiceError('unauthorized', 'unknown API key');
  const wanted = query['dataset_id'];
  // `?dataset_id=1&dataset_id=1` parses to an array: ambiguous, so refused rather than guessed.
  if (Array.isArray(wanted)) throw new ServiceError('invalid_request', 'dataset_id: give it at most once');
  if (wanted !== undefined && String(wanted) !== String(dataset.id)) throw notFound('dataset');
  if (limiter !== null) {
    const verdict = limiter.take(keyHash);
    if (!verdict.ok) {
      throw new ServiceError('rate_limited', 'rate limit exceeded', { headers: { 'retry-after': String(verdict.retryAfterSeconds) } });
    }
  }
  return { datasetId: dataset.id, plan: dataset.plan, keyHash };
}
