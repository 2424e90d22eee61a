import { KbsyncError, type ErrorCode } from '../shared/errors.js';

/** HTTP status of each error code the service answers with (API.md's table, plus 405; docs/service.md). */
export const STATUS_OF: Partial<Record<ErrorCode, number>> = {
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
};

/** An error the service answers on purpose: a code from API.md, and a status when it differs from the code's usual one. */
export class ServiceError extends KbsyncError {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { status?: number; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(code, message, { cause: opts.cause });
    this.name = 'ServiceError';
    this.status = opts.status ?? STATUS_OF[code] ?? 500;
    this.headers = opts.headers ?? {};
  }
}

/** Shorthand for the common 404. */
export function notFound(what: string): ServiceError {
  return new ServiceError('not_found', `${what} not found`);
}
