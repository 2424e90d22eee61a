import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { errors as undiciErrors } from 'undici';
import { describe, expect, it } from 'vitest';
import { KbsyncError } from '../shared/errors.js';
import { createLogger } from '../shared/logger.js';
import { API_ERROR_STATUS, type ApiErrorCode } from '../shared/api-errors.js';
import { ApiError, SNIPPET_MAX, classifyStatus, readErrorBody, redact, snippetOf } from './errors.js';
import { API_KEY, mockService } from './mock-service.test-util.js';

const noRetry = { retry: { retries: 0 } };

async function failureOf(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('error codes from status', () => {
  it.each([
    [400, 'invalid_request'],
    [401, 'unauthorized'],
    [402, 'insufficient_credits'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [405, 'method_not_allowed'],
    [408, 'timeout'],
    [409, 'limit_reached'],
    [413, 'file_too_large'],
    [415, 'unsupported_file_type'],
    [418, 'invalid_request'],
    [422, 'validation_failed'],
    [429, 'rate_limited'],
    [500, 'internal'],
    [503, 'internal'],
  ] as const)('%i without an error code → %s', async (status, code) => {
    const { client, reply } = mockService(noRetry);
    reply({ status, data: '<html>oops</html>', headers: { 'content-type': 'text/html' } });

    const err = await failureOf(client.listWebhooks());

    expect(err).toMatchObject({ code, status, method: 'GET', url: 'http://svc.test/api/v2/ext/webhooks', serverCode: null });
    expect(err).toBeInstanceOf(KbsyncError);
  });

  it.each([
    [403, 'tier_required'],
    [403, 'mode_forbidden'],
    [409, 'idempotency_in_progress'],
    [422, 'idempotency_mismatch'],
    [402, 'insufficient_credits'],
    [409, 'limit_reached'],
    [405, 'method_not_allowed'],
  ] as const)('%i with body code %s keeps the server code', async (status, code) => {
    const { client, reply } = mockService(noRetry);
    reply({ status, data: { error: { code, message: 'no' } } });

    const err = await failureOf(client.listWebhooks());

    expect(err).toMatchObject({ code, status, serverCode: code });
  });

  it("takes over every code of the service's error table with its status, whatever the message", () => {
    const table = Object.entries(API_ERROR_STATUS) as [ApiErrorCode, number][];
    expect(table.length).toBeGreaterThanOrEqual(16);
    for (const [code, status] of table) {
      expect(classifyStatus(status, code, 'out of credits', true)).toBe(code);
    }
  });

  it('an unknown server code falls back to the status, and is kept as serverCode', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 404, data: { error: { code: 'agent_missing', message: 'no such agent' } } });

    const err = await failureOf(client.getAgent('9'));

    expect(err).toMatchObject({ code: 'not_found', serverCode: 'agent_missing' });
  });

  it('a 403 that talks about credits means out of credits (docs/api.md)', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 403, data: { detail: 'Insufficient credits for this operation' } });

    const err = await failureOf(client.query({ query: 'q' }));

    expect(err.code).toBe('insufficient_credits');
  });

  it('a 409 on a paid call is its Idempotency-Key still running: the outcome is unknown, not a refusal', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 409, data: {} });
    const bare = await failureOf(client.reindex());
    reply({ status: 409, data: { error: { code: 'idempotency_in_progress', message: 'still running' } } });
    const coded = await failureOf(client.reindex());

    expect(bare).toMatchObject({ code: 'unknown_outcome', status: 409 });
    expect(coded).toMatchObject({ code: 'unknown_outcome', status: 409, serverCode: 'idempotency_in_progress' });
  });

  it('a 409 limit_reached on a paid call stays a refusal, and a 4xx is never unknown', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 409, data: { error: { code: 'limit_reached', message: 'ten webhooks' } } });
    const limit = await failureOf(client.reindex());
    reply({ status: 402, data: { error: { code: 'insufficient_credits', message: 'no credits' } } });
    const credits = await failureOf(client.reindex());

    expect(limit.code).toBe('limit_reached');
    expect(credits.code).toBe('insufficient_credits');
  });

  it('carries Retry-After in ms', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 429, data: { error: { code: 'rate_limited', message: 'slow down' } }, headers: { 'retry-after': '7' } });

    const err = await failureOf(client.listAgents());

    expect(err).toMatchObject({ code: 'rate_limited', retryAfterMs: 7000, status: 429 });
  });
});

describe('error message', () => {
  it.each([
    [{ error: { code: 'x', message: 'A' }, message: 'B', detail: 'C' }, 'A'],
    [{ message: 'B', detail: 'C', error: 'E' }, 'B'],
    [{ detail: 'C', error: 'E' }, 'C'],
    [{ detail: [{ loc: ['body', 'top_k'], msg: 'too big' }, 'second'] }, 'body.top_k: too big; second'],
    [{ error: 'E' }, 'E'],
    [{}, null],
    ['not an object', null],
  ])('reads %j as %j', (body, message) => {
    expect(readErrorBody(body).message).toBe(message);
  });

  it('appears in the error with method, URL and status', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 422, data: { error: { code: 'validation_failed', message: 'top_k must be at most 20' } } });

    const err = await failureOf(client.query({ query: 'q', topK: 50 }));

    expect(err.message).toBe('POST http://svc.test/api/v1/ext/datasets/query answered 422 validation_failed: top_k must be at most 20');
  });
});

describe('bad success bodies', () => {
  it('an HTML 200 is non_json_response', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: '<!doctype html><html>app</html>', headers: { 'content-type': 'text/html' } });

    const err = await failureOf(client.listDatasets());

    expect(err).toMatchObject({ code: 'non_json_response', status: 200, bodySnippet: '<!doctype html><html>app</html>' });
  });

  it('an empty 200 is non_json_response', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: '' });

    const err = await failureOf(client.listDatasets());

    expect(err.code).toBe('non_json_response');
  });

  it('JSON that fails validation is unexpected_response, naming the field', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: { agents: [{ id: 'a1', name: 7 }] } });

    const err = await failureOf(client.listAgents());

    expect(err.code).toBe('unexpected_response');
    expect(err.message).toMatch(/unexpected response body \(.+\)/);
  });

  it('on a paid call, a 2xx whose body cannot be read is unknown_outcome: the work was done and charged', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: { results: [{ score: 'high', knowledge_source_id: 1, chunk_index: 0, text: 'a' }] } });
    const invalid = await failureOf(client.query({ query: 'q' }));
    reply({ status: 201, data: '<html>ok</html>', headers: { 'content-type': 'text/html' } });
    const html = await failureOf(client.reindex());

    expect(invalid).toMatchObject({ code: 'unknown_outcome', status: 200 });
    expect(invalid.message).toContain('results.0.score');
    expect(invalid.message).toContain('it answered success, so it may have been done (and charged)');
    expect(html).toMatchObject({ code: 'unknown_outcome', status: 201 });
    expect(html.message).toContain('not JSON (wrong base URL, prefix or key?)');
  });

  it('keeps a bounded body snippet', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 400, data: { error: { code: 'invalid_request', message: 'x'.repeat(5000) } } });

    const err = await failureOf(client.listAgents());

    expect(err.bodySnippet?.length).toBe(SNIPPET_MAX);
    expect(err.message.length).toBeLessThan(500);
  });
});

describe('transport failures of free calls', () => {
  it.each([
    [new undiciErrors.SocketError('other side closed'), 'network'],
    [new undiciErrors.HeadersTimeoutError(), 'timeout'],
    [new undiciErrors.BodyTimeoutError(), 'timeout'],
    [new undiciErrors.ConnectTimeoutError(), 'timeout'],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'network'],
  ])('%s → %s, with the cause', async (error, code) => {
    const { client, reply } = mockService(noRetry);
    reply({ error });

    const err = await failureOf(client.listFiles());

    expect(err).toMatchObject({ code, status: null, method: 'GET' });
    expect(err.cause).toBe(error);
  });
});

describe('the API key never leaks', () => {
  const echo = `bad key ${API_KEY} (${encodeURIComponent(API_KEY)})`;

  function expectClean(err: ApiError) {
    for (const text of [
      err.message,
      err.url,
      err.bodySnippet ?? '',
      String(err.serverCode),
      inspect(err, { depth: 10 }),
      JSON.stringify(err),
    ]) {
      expect(text).not.toContain(API_KEY);
    }
  }

  it('is redacted from an error body that echoes it', async () => {
    const { client, reply } = mockService(noRetry);
    reply({ status: 401, data: { error: { code: 'unauthorized', message: echo }, key: API_KEY } });

    const err = await failureOf(client.listAgents());

    expect(err.code).toBe('unauthorized');
    expect(err.bodySnippet).toContain('[redacted]');
    expect(err.message).toContain('bad key [redacted]');
    expectClean(err);
  });

  it('is redacted from an HTML 200 that echoes it, also across the snippet cut', async () => {
    const { client, reply } = mockService();
    const pad = 'x'.repeat(SNIPPET_MAX - 16 - API_KEY.length); // the second key straddles the raw cut
    reply({ status: 200, data: `<html>${API_KEY}${pad}${API_KEY}</html>` });

    const err = await failureOf(client.listAgents());

    expect(err.code).toBe('non_json_response');
    expect(err.bodySnippet).toMatch(/^<html>\[redacted\]x+\[redacted\]/);
    expect(err.bodySnippet).not.toContain(API_KEY.slice(0, 8));
    expectClean(err);
  });

  it('is redacted from a body that fails validation', async () => {
    const { client, reply } = mockService();
    reply({ status: 200, data: { agents: [{ id: { key: API_KEY } }] } });

    const err = await failureOf(client.listAgents());

    expect(err.code).toBe('unexpected_response');
    expectClean(err);
  });

  it('is not written to the logs of a retried call', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(chunk.toString()), cb()) });
    const logger = createLogger({ level: 'debug' }, sink);
    const { client, reply } = mockService({ logger, retry: { retries: 1, random: () => 0 } });
    reply({ status: 503, data: { error: { message: echo } } });
    reply({ status: 200, data: { webhooks: [] } });

    await client.listWebhooks();

    expect(lines.join('')).toContain('retrying request');
    expect(lines.join('')).not.toContain(API_KEY);
  });

  it('is redacted by redact() in raw and URL-encoded form', () => {
    expect(redact(`a ${API_KEY} b ${encodeURIComponent('k y')}`, [API_KEY, 'k y'])).toBe('a [redacted] b [redacted]');
    expect(snippetOf('', [API_KEY])).toBeNull();
  });
});
