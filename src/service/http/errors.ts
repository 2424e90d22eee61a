import { KbsyncError, type ErrorCode } from '../../shared/errors.js';
import { STATUS_OF, ServiceError } from '../service-error.js';

export type ErrorResponse = { status: number; headers: Record<string, string>; body: { error: { code: string; message: string } } };

type FrameworkError = { code?: unknown; statusCode?: unknown; message?: unknown };

/** Fastify / multipart error codes and what the client is told about them. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'invalid_request', message: 'unsupported Content-Type (send application/json)' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'invalid_request', message: 'request body too large' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_request', message: 'empty JSON body' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_request', message: 'malformed JSON body' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_request', message: 'Content-Length does not match the body' },
  FST_REQ_FILE_TOO_LARGE: { status: 413, code: 'file_too_large', message: 'file exceeds the plan size limit' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { status: 415, code: 'invalid_request', message: 'send multipart/form-data' },
  FST_FILES_LIMIT: { status: 400, code: 'invalid_request', message: 'send exactly one file' },
  FST_PARTS_LIMIT: { status: 400, code: 'invalid_request', message: 'too many multipart parts' },
  FST_FIELDS_LIMIT: { status: 400, code: 'invalid_request', message: 'too many multipart fields' },
  FST_PROTO_VIOLATION: { status: 400, code: 'invalid_request', message: 'prohibited multipart field name' },
};

/** Classifies any thrown value, once, into the service's error response. */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof ServiceError) {
    return { status: err.status, headers: err.headers, body: { error: { code: err.code, message: err.message } } };
  }
  if (err instanceof KbsyncError) {
    const status = STATUS_OF[err.code] ?? 500;
    return { status, headers: {}, body: { error: { code: status >= 500 ? 'internal' : err.code, message: status >= 500 ? 'internal error' : err.message } } };
  }
  const fe = (typeof err === 'object' && err !== null ? err : {}) as FrameworkError;
  const known = typeof fe.code === 'string' ? FRAMEWORK_ERRORS[fe.code] : undefined;
  if (known !== undefined) return { status: known.status, headers: {}, body: { error: { code: known.code, message: known.message } } };
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const message = typeof fe.message === 'string' && fe.message !== '' ? fe.message : 'bad request';
    return { status, headers: {}, body: { error: { code: 'invalid_request', message } } };
  }
  return { status: 500, headers: {}, body: { error: { code: 'internal', message: 'internal error' } } };
}

