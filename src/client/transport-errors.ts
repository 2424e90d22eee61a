import { errorText } from '../shared/errors.js';
import { ApiError, classifyStatus, readErrorBody, redact, snippetOf } from './errors.js';
import { parseRetryAfter } from './retry.js';

/** Turns what undici hands back (a thrown error, an error status) into one ApiError. */

/** How a call may be repeated: retried freely, or sent once (paid, or free but not idempotent). */
export type CallKind = 'idempotent' | 'paid' | 'once';

export type ErrorContext = { method: string; url: string; kind: CallKind; secrets: readonly string[]; sentIdempotencyKey: boolean };

/** Failures that happen before a request reaches the server: the call surely had no effect. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  // the body ended short of its content-length: the server cannot have accepted a truncated request
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
]);
const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function errorCodeOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/** The ApiError for a request that got no (complete) answer. */
export function transportError(cause: unknown, ctx: ErrorContext): ApiError {
  const sysCode = errorCodeOf(cause);
  const detail = redact(errorText(cause), ctx.secrets);
  const base = { status: null, method: ctx.method, url: ctx.url, cause };
  if (ctx.kind !== 'idempotent' && (sysCode === null || !NOT_SENT.has(sysCode))) {
    // Why: the request may have been applied (and charged). Retrying blindly could pay twice;
    // the caller reconciles (e.g. GET /files/) before deciding.
    return new ApiError({ ...base, code: 'unknown_outcome', message: `${ctx.method} ${ctx.url}: no answer, outcome unknown (${detail})` });
  }
  const code = sysCode !== null && TIMEOUTS.has(sysCode) ? 'timeout' : 'network';
  return new ApiError({ ...base, code, message: `${ctx.method} ${ctx.url}: ${detail}` });
}

/** The ApiError for a non-2xx answer. */
export function statusError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  ctx: ErrorContext,
  nowMs: number,
): ApiError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the status alone classifies it
  }
  const { serverCode, message } = readErrorBody(parsed);
  const retryAfterMs = parseRetryAfter(headers['retry-after'], nowMs);
  const classified = classifyStatus(status, serverCode, message, ctx.sentIdempotencyKey);
  // A call that may take effect (paid, or not idempotent) is refused only by an answer that says so.
  // A 5xx does not: the server (or a gateway that lost track of it) may fail after doing the work and
  // charging for it. Nor does 409 idempotency_in_progress: the first request with this key is still
  // running, and will be charged. Either is checked against the remote state before any retry.
  const mayHaveRun = ctx.kind !== 'idempotent' && (status >= 500 || classified === 'idempotency_in_progress');
  const code = mayHaveRun ? 'unknown_outcome' : classified;
  const text1 = redact(message ?? `HTTP ${status}`, ctx.secrets).slice(0, 300);
  return new ApiError({
    code,
    message: `${ctx.method} ${ctx.url} answered ${status}${serverCode === null ? '' : ` ${serverCode}`}: ${text1}`,
    status,
    method: ctx.method,
    url: ctx.url,
    retryAfterMs,
    bodySnippet: snippetOf(text, ctx.secrets),
    serverCode: serverCode === null ? null : redact(serverCode, ctx.secrets),
  });
}
