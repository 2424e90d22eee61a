import { API_ERROR_STATUS } from '../shared/api-errors.js';
import { KbsyncError, type ErrorCode } from '../shared/errors.js';

/** HTTP status of each error code the service answers with (the shared table: docs/api.md's, plus 405). */
export const STATUS_OF: Partial<Record<ErrorCode, number>> = API_ERROR_STATUS;

/** An error the service answers on purpose: a code from docs/api.md, and a status when it differs from the code's usual one. */
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
