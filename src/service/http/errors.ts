import { KbsyncError, type ErrorCode } from '../../shared/errors.js';
import { STATUS_OF, ServiceError } from '../service-error.js';
import { JSON_BODY_LIMIT } from './limits.js';

export type ErrorResponse = { status: number; headers: Record<string, string>; body: { error: { code: string; message: string } } };

/** What the failed request was: the body type its route reads, and the Content-Type it sent. */
export type RequestFacts = { expects: 'application/json' | 'multipart/form-data'; contentType: string | undefined };

type FrameworkError = { code?: unknown; statusCode?: unknown; message?: unknown };
type Known = { status: number; code: ErrorCode; message: (facts: RequestFacts) => string };

const fixed = (message: string) => () => message;
const invalid = (message: (facts: RequestFacts) => string): Known => ({ status: 400, code: 'invalid_request', message });

/** The 400's message for a body of the wrong type: names the expected Content-Type and the one sent. */
export function wrongContentType({ expects, contentType }: RequestFacts): string {
  const sent = contentType === undefined || contentType === '' ? 'none' : `"${contentType.slice(0, 100)}"`;
  return `Content-Type must be ${expects} (got ${sent})`;
}

/**
 * Fastify / multipart error codes and what the client is told about them: only docs/api.md's pairs.
 * A wrong Content-Type is a 400 (415 is `unsupported_file_type`), and a JSON body over the limit is a
 * 400 too (413 is `file_too_large`, which a client would take for a per-file outcome).
 */
const FRAMEWORK_ERRORS: Record<string, Known> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: invalid(wrongContentType),
  FST_INVALID_MULTIPART_CONTENT_TYPE: invalid(wrongContentType),
  FST_ERR_CTP_BODY_TOO_LARGE: invalid(fixed(`JSON body over ${JSON_BODY_LIMIT} bytes`)),
  FST_ERR_CTP_EMPTY_JSON_BODY: invalid(fixed('empty JSON body')),
  FST_ERR_CTP_INVALID_JSON_BODY: invalid(fixed('malformed JSON body')),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: invalid(fixed('Content-Length does not match the body')),
  FST_REQ_FILE_TOO_LARGE: { status: 413, code: 'file_too_large', message: fixed('file exceeds the plan size limit') },
  FST_FILES_LIMIT: invalid(fixed('send exactly one file part')),
  FST_PARTS_LIMIT: invalid(fixed('too many multipart parts')),
  FST_FIELDS_LIMIT: invalid(fixed('too many multipart fields')),
  FST_PROTO_VIOLATION: invalid(fixed('prohibited multipart field name')),
};

const DEFAULT_FACTS: RequestFacts = { expects: 'application/json', contentType: undefined };

/** Classifies any thrown value, once, into the service's error response (always a pair of docs/api.md's table, or 405). */
export function toErrorResponse(err: unknown, facts: RequestFacts = DEFAULT_FACTS): ErrorResponse {
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
  const fe = (typeof err === 'object' && err !== null ? err : {}) as FrameworkError;
  const known = typeof fe.code === 'string' ? FRAMEWORK_ERRORS[fe.code] : undefined;
  if (known !== undefined)
    return { status: known.status, headers: {}, body: { error: { code: known.code, message: known.message(facts) } } };
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  // Any other client error of the framework is a bad request: never a status outside the table.
  if (status >= 400 && status < 500) {
    const message = typeof fe.message === 'string' && fe.message !== '' ? fe.message : 'bad request';
    return { status: 400, headers: {}, body: { error: { code: 'invalid_request', message } } };
  }
  return { status: 500, headers: {}, body: { error: { code: 'internal', message: 'internal error' } } };
}
