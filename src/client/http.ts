import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { ApiError, redact, snippetOf } from './errors.js';
import { DEFAULT_RETRY, DEFAULT_RETRY_AFTER_MS, retryDelayMs, type RetryPolicy } from './retry.js';
import { createRetryAfterGate, endpointOf } from './retry-after-gate.js';
import { statusError, transportError, type CallKind, type ErrorContext } from './transport-errors.js';
import type { ClientOptions, Clock, Dialect } from './types.js';

/** The one door to HTTP: URL and headers from the dialect, timeouts, retries, JSON + zod parsing. */

export type { CallKind };

export const DEFAULT_DIALECT: Dialect = { v1Prefix: '/api/v1/ext', v2Prefix: '/api/v2/ext', authHeader: 'X-API-Key', uploadField: 'file' };
export const DEFAULT_TIMEOUTS = { connectMs: 10_000, headersMs: 30_000, bodyMs: 60_000 };

/** A body streamed from somewhere (uploads): a fresh stream per attempt, and its exact length. */
export type StreamBody = { open: () => AsyncIterable<Uint8Array>; length: number; contentType: string };

export type CallSpec = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  api: 'v1' | 'v2';
  /** Path after the dialect's prefix, starting with `/`. */
  path: string;
  /** The path with its ids as `{id}`, when it has any: names the endpoint a 429 pauses (retry-after-gate.ts). */
  route?: string;
  kind: CallKind;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  stream?: StreamBody;
  /** Idempotency-Key of a paid call; a fresh UUID when absent. */
  idempotencyKey?: string;
  signal?: AbortSignal;
};

export type Http = {
  readonly dialect: Dialect;
  /** Sends one call (retrying when its kind allows) and returns its body validated by `schema`. */
  call<T>(spec: CallSpec, schema: z.ZodType<T>): Promise<T>;
  close(): Promise<void>;
};

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** Builds the HTTP core of a client from its options. */
export function createHttp(opts: ClientOptions): Http {
  const dialect: Dialect = { ...DEFAULT_DIALECT, ...opts.dialect };
  const t = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  const policy: RetryPolicy = { ...DEFAULT_RETRY, random: Math.random, ...opts.retry };
  const clock: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), ...opts.clock };
  const ownAgent =
    opts.dispatcher === undefined
      ? new Agent({ connect: { timeout: t.connectMs }, headersTimeout: t.headersMs, bodyTimeout: t.bodyMs })
      : null;
  const dispatcher: Dispatcher = opts.dispatcher ?? (ownAgent as Agent);
  const secrets = [opts.apiKey];
  const base = opts.baseUrl.replace(/\/+$/, '');
  const log = opts.logger;
  const gate = createRetryAfterGate();

  function urlOf(spec: CallSpec): string {
    const prefix = spec.api === 'v1' ? dialect.v1Prefix : dialect.v2Prefix;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) params.set(k, String(v));
    if (opts.datasetId !== undefined) params.set('dataset_id', opts.datasetId);
    const qs = params.toString();
    return `${base}${prefix.replace(/\/+$/, '')}${spec.path}${qs === '' ? '' : `?${qs}`}`;
  }

  function headersOf(spec: CallSpec, idempotencyKey: string | null): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', [dialect.authHeader]: opts.apiKey };
    if (spec.json !== undefined) h['content-type'] = 'application/json';
    if (spec.stream !== undefined) {
      h['content-type'] = spec.stream.contentType;
      h['content-length'] = String(spec.stream.length);
    }
    if (idempotencyKey !== null) h['idempotency-key'] = idempotencyKey;
    return h;
  }

  async function send(spec: CallSpec, url: string, headers: Record<string, string>, ctx: ErrorContext): Promise<Raw> {
    try {
      const res = await request(url, {
        method: spec.method,
        headers,
        // undici documents async iterables as request bodies (streamed with backpressure); its
        // typings list only Readable, hence the cast.
        body:
          spec.stream !== undefined
            ? (spec.stream.open() as unknown as Readable)
            : spec.json !== undefined
              ? JSON.stringify(spec.json)
              : undefined,
        dispatcher,
        headersTimeout: t.headersMs,
        bodyTimeout: t.bodyMs,
        signal: spec.signal,
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text };
    } catch (cause) {
      if (spec.signal?.aborted === true) throw spec.signal.reason;
      throw transportError(cause, ctx);
    }
  }

  function parse<T>(raw: Raw, schema: z.ZodType<T>, ctx: ErrorContext): T {
    if (raw.status < 200 || raw.status > 299) throw statusError(raw.status, raw.headers, raw.text, ctx, clock.now());
    const common = { status: raw.status, method: ctx.method, url: ctx.url, bodySnippet: snippetOf(raw.text, secrets) };
    // A 2xx says the work was done (and a paid call charged) even when its body cannot be read: for a
    // call that may take effect, what it did is unknown to us, and is checked before any retry.
    const unreadable = (
      code: 'non_json_response' | 'unexpected_response',
    ): 'non_json_response' | 'unexpected_response' | 'unknown_outcome' => (ctx.kind === 'idempotent' ? code : 'unknown_outcome');
    const mayHaveRun =
      ctx.kind === 'idempotent' ? '' : '; it answered success, so it may have been done (and charged): checked before any retry';
    let body: unknown;
    try {
      body = JSON.parse(raw.text);
    } catch {
      // No `cause`: JSON.parse's message quotes the body, which may echo the key; the snippet is redacted.
      const type = String(raw.headers['content-type'] ?? 'no content-type');
      throw new ApiError({
        ...common,
        code: unreadable('non_json_response'),
        message: `${ctx.method} ${ctx.url} answered ${raw.status} with ${type}, not JSON (wrong base URL, prefix or key?)${mayHaveRun}`,
      });
    }
    const result = schema.safeParse(body);
    if (!result.success) {
      const issues = result.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; ');
      throw new ApiError({
        ...common,
        code: unreadable('unexpected_response'),
        message: `${ctx.method} ${ctx.url}: unexpected response body (${redact(issues, secrets)})${mayHaveRun}`,
        cause: result.error,
      });
    }
    return result.data;
  }

  /**
   * Waits out the Retry-After window of the call's endpoint before anything is sent. A paid call is not
   * held here (its caller's queue decides when to send it again, without holding a slot meanwhile), nor
   * is any call when the window is longer than maxRetryAfterMs: both get rate_limited, with the time left.
   */
  async function untilOpen(spec: CallSpec, endpoint: string, url: string): Promise<void> {
    for (;;) {
      const waitMs = gate.remainingMs(endpoint, clock.now());
      if (waitMs <= 0) return;
      if (spec.kind === 'paid' || waitMs > policy.maxRetryAfterMs) {
        throw new ApiError({
          code: 'rate_limited',
          status: null,
          method: spec.method,
          url,
          retryAfterMs: waitMs,
          message: `${spec.method} ${url} not sent: the service asked (429 Retry-After) for no calls to ${endpoint} for ${Math.ceil(waitMs / 1000)} s more`,
        });
      }
      log?.debug({ endpoint, waitMs }, 'waiting out Retry-After');
      await clock.sleep(waitMs);
    }
  }

  async function call<T>(spec: CallSpec, schema: z.ZodType<T>): Promise<T> {
    const url = redact(urlOf(spec), secrets);
    const endpoint = endpointOf(spec);
    const idempotencyKey = spec.kind === 'paid' ? (spec.idempotencyKey ?? randomUUID()) : null;
    const headers = headersOf(spec, idempotencyKey);
    const ctx: ErrorContext = { method: spec.method, url, kind: spec.kind, secrets, sentIdempotencyKey: idempotencyKey !== null };
    for (let attempt = 0; ; attempt++) {
      // Only awaited when closed: an open endpoint sends in the same tick, as if there were no gate.
      if (gate.remainingMs(endpoint, clock.now()) > 0) await untilOpen(spec, endpoint, url);
      try {
        return parse(await send(spec, urlOf(spec), headers, ctx), schema, ctx);
      } catch (err) {
        // Closed before anything else runs: no request to this endpoint starts inside the window.
        if (err instanceof ApiError && err.status === 429) gate.close(endpoint, clock.now() + (err.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS));
        if (!(err instanceof ApiError) || spec.kind !== 'idempotent') throw err;
        const waitMs = retryDelayMs(err, attempt, policy);
        if (waitMs === null) throw err;
        log?.debug({ method: spec.method, url, attempt: attempt + 1, waitMs, code: err.code }, 'retrying request');
        await clock.sleep(waitMs);
      }
    }
  }

  return {
    dialect,
    call,
    close: async () => {
      await ownAgent?.close();
    },
  };
}
