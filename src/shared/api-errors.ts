import type { ErrorCode } from './errors.js';

/**
 * docs/api.md's error table, plus 405 (the local service's one addition, docs/service.md): every code the
 * service answers with, and its usual HTTP status. One table for both ends: the local service
 * answers with it (src/service/service-error.ts) and the client takes exactly these codes over
 * from an error body (src/client/errors.ts).
 */
export const API_ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  tier_required: 403,
  mode_forbidden: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  limit_reached: 409,
  idempotency_in_progress: 409,
  file_too_large: 413,
  unsupported_file_type: 415,
  validation_failed: 422,
  idempotency_mismatch: 422,
  rate_limited: 429,
  internal: 500,
} as const satisfies Partial<Record<ErrorCode, number>>;

/** A code of the service's error table. */
export type ApiErrorCode = keyof typeof API_ERROR_STATUS;
