import { KbsyncError } from '../../shared/errors.js';
import { STATUS_OF, ServiceError } from '../service-error.js';

export type ErrorResponse = { status: number; headers: Record<string, string>; body: { error: { code: string; message: string } } };

/** The 400's message for a body of the wrong type: names the expected Content-Type and the one sent. */
export function wrongContentType({ expects, contentType }: { expects: string; contentType: string | undefined }): string {
  const sent = contentType === undefined || contentType === '' ? 'none' : `"${contentType.slice(0, 100)}"`;
  return `Content-Type must be ${expects} (got ${sent})`;
}

/**
 * Classifies any thrown value, once, into the service's error response: a pair of docs/api.md's
 * table (or 405). A wrong Content-Type is a 400 (415 is `unsupported_file_type`), and so is a JSON
 * body over the limit (413 is `file_too_large`, which a client would take for a per-file outcome):
 * both are thrown as ServiceErrors where they are found. Anything unknown is a 500 that says nothing.
 */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof ServiceError) {
    return { status: err.status, headers: err.headers, body: { error: { code: err.code, message: err.message } } };
  }
  if (err instanceof KbsyncError) {
    const status = STATUS_OF[err.code] ?? 500;
    return {
      status,
      headers: {},
      body: { error: { code: status >= 500 ? 'internal' : err.code, message: status >= 500 ? 'internal error' : err.message } },
    };
  }
  return { status: 500, headers: {}, body: { error: { code: 'internal', message: 'internal error' } } };
}
