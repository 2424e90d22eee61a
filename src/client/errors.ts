import { API_ERROR_STATUS } from '../shared/api-errors.js';
import { KbsyncError, type ErrorCode } from '../shared/errors.js';

/** Typed API errors: one class, a stable code, classified once here at the HTTP boundary. */

/** Longest body excerpt an ApiError keeps. */
export const SNIPPET_MAX = 500;

export type ApiErrorInit = {
  code: ErrorCode;
  message: string;
  status: number | null;
  method: string;
  url: string;
  retryAfterMs?: number | null;
  bodySnippet?: string | null;
  /** The code the server wrote in its error body, when it wrote one. */
  serverCode?: string | null;
  cause?: unknown;
};

/** An error from (or on the way to) the knowledge service; never holds the API key. */
export class ApiError extends KbsyncError {
  readonly status: number | null;
  readonly retryAfterMs: number | null;
  readonly method: string;
  readonly url: string;
  readonly bodySnippet: string | null;
  readonly serverCode: string | null;

  constructor(init: ApiErrorInit) {
    super(init.code, init.message, { cause: init.cause });
    this.name = 'ApiError';
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.method = init.method;
    this.url = init.url;
    this.bodySnippet = init.bodySnippet ?? null;
    this.serverCode = init.serverCode ?? null;
  }
}

/** True when `err` is an ApiError (optionally with one of the given codes). */
export function isApiError(err: unknown, ...codes: ErrorCode[]): err is ApiError {
  return err instanceof ApiError && (codes.length === 0 || codes.includes(err.code));
}

/** The codes of docs/api.md's error table (shared with the local service): the only server codes taken over as-is. */
const SERVER_CODES: ReadonlySet<string> = new Set(Object.keys(API_ERROR_STATUS));

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'timeout',
  409: 'limit_reached',
  413: 'file_too_large',
  415: 'unsupported_file_type',
  422: 'validation_failed',
  429: 'rate_limited',
};

/**
 * The code of an error response: the server's own code when it is one of docs/api.md's, else by status.
 * A 403 whose text mentions credits means "out of credits" on the hosted service (docs/api.md), and a bare
 * 409 on a request that carried an Idempotency-Key is that key still running.
 */
export function classifyStatus(status: number, serverCode: string | null, message: string | null, sentIdempotencyKey: boolean): ErrorCode {
  if (serverCode !== null && SERVER_CODES.has(serverCode)) return serverCode as ErrorCode;
  if (status >= 500) return 'internal';
  if (status === 403 && message !== null && /credit/i.test(message)) return 'insufficient_credits';
  if (status === 409 && sentIdempotencyKey) return 'idempotency_in_progress';
  return STATUS_CODES[status] ?? 'invalid_request';
}

/** The server's error code and message from a parsed error body, read leniently (docs/api.md order). */
export function readErrorBody(body: unknown): { serverCode: string | null; message: string | null } {
  if (typeof body !== 'object' || body === null) return { serverCode: null, message: null };
  const b = body as Record<string, unknown>;
  const err = typeof b.error === 'object' && b.error !== null ? (b.error as Record<string, unknown>) : null;
  const serverCode = typeof err?.code === 'string' ? err.code : typeof b.code === 'string' ? b.code : null;
  return { serverCode, message: firstMessage(err?.message, b.message, b.detail, b.error) };
}

function firstMessage(...candidates: unknown[]): string | null {
  for (const c of candidates) {
    if (typeof c === 'string' && c.length > 0) return c;
    if (Array.isArray(c) && c.length > 0) return c.map(detailText).join('; ');
  }
  return null;
}

/** One entry of a `detail` list (FastAPI style: `{ loc, msg }`) as text. */
function detailText(d: unknown): string {
  if (typeof d === 'string') return d;
  if (typeof d === 'object' && d !== null && typeof (d as { msg?: unknown }).msg === 'string') {
    const { msg, loc } = d as { msg: string; loc?: unknown };
    return Array.isArray(loc) ? `${loc.join('.')}: ${msg}` : msg;
  }
  return JSON.stringify(d);
}

/** Replaces every occurrence of each secret (raw and URL-encoded) by `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (s.length === 0) continue;
    out = out.split(s).join('[redacted]');
    const encoded = encodeURIComponent(s);
    if (encoded !== s) out = out.split(encoded).join('[redacted]');
  }
  return out;
}

/** A redacted body excerpt of at most SNIPPET_MAX characters (null when empty). */
export function snippetOf(body: string, secrets: readonly string[]): string | null {
  if (body.length === 0) return null;
  // Redact before cutting, so a key split by the cut cannot leak its first half.
  const clean = redact(body, secrets);
  return clean.length <= SNIPPET_MAX ? clean : `${clean.slice(0, SNIPPET_MAX - 1)}…`;
}
