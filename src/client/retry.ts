import type { ErrorCode } from '../shared/errors.js';
import type { ApiError } from './errors.js';

/** Retry policy of free idempotent calls: which failures, how long to wait (capped, full jitter). */

export type RetryPolicy = { retries: number; baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number; random: () => number };

export const DEFAULT_RETRY: Omit<RetryPolicy, 'random'> = { retries: 3, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 60_000 };

/** How long a 429 without a (readable) Retry-After pauses its endpoint. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['network', 'timeout', 'rate_limited', 'internal']);

/** Milliseconds a `Retry-After` value asks for (delta seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return null;
  const t = v.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const date = Date.parse(t);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/**
 * How long to wait before retry number `attempt` (0-based) of a failed free call, or null to give up.
 * Full jitter: a uniform wait in [0, min(max, base * 2^attempt)). A Retry-After is a floor; one longer
 * than maxRetryAfterMs is not waited for: the error goes to the caller, who has its retryAfterMs.
 */
export function retryDelayMs(err: ApiError, attempt: number, policy: RetryPolicy): number | null {
  if (attempt >= policy.retries || !RETRYABLE.has(err.code)) return null;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jittered = Math.floor(policy.random() * ceiling);
  if (err.retryAfterMs === null) return jittered;
  if (err.retryAfterMs > policy.maxRetryAfterMs) return null;
  return Math.max(err.retryAfterMs, jittered);
}
