import { errors as undiciErrors } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ErrorCode } from '../shared/errors.js';
import { ApiError } from './errors.js';
import { mockService } from './mock-service.test-util.js';
import { parseRetryAfter, retryDelayMs, type RetryPolicy } from './retry.js';
import type { KnowledgeClient } from './types.js';

function apiError(code: ErrorCode, retryAfterMs: number | null = null): ApiError {
  return new ApiError({ code, message: code, status: null, method: 'GET', url: 'u', retryAfterMs });
}

const policy = (random: number, over: Partial<RetryPolicy> = {}): RetryPolicy => ({
  retries: 5,
  baseDelayMs: 1000,
  maxDelayMs: 4000,
  maxRetryAfterMs: 10_000,
  random: () => random,
  ...over,
});

/** Settles a promise into a value the test can inspect while timers are fake. */
function track<T>(p: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (value) => Object.assign(state, { done: true, value }),
    (error: unknown) => Object.assign(state, { done: true, error }),
  );
  return state;
}

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it.each([
    ['3', 3000],
    [' 0 ', 0],
    [['12'], 12_000],
    ['Wed, 01 Jan 2025 00:00:10 GMT', 10_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    ['soon', null],
    ['', null],
    [undefined, null],
  ] as const)('%j → %j ms', (value, ms) => {
    expect(parseRetryAfter(value as string | string[] | undefined, now)).toBe(ms);
  });
});

describe('retryDelayMs', () => {
  it.each([
    [0, 0, 0],
    [0, 0.5, 500],
    [0, 0.9999, 999],
    [1, 0.9999, 1999],
    [2, 0.9999, 3999],
    [3, 0.9999, 3999],
    [4, 0.5, 2000],
  ])('attempt %i with random %f waits %i ms (full jitter, capped at 4000)', (attempt, random, ms) => {
    expect(retryDelayMs(apiError('internal'), attempt, policy(random))).toBe(ms);
  });

  it.each(['network', 'timeout', 'rate_limited', 'internal'] as const)('retries %s', (code) => {
    expect(retryDelayMs(apiError(code), 0, policy(0.5))).not.toBeNull();
  });

  it.each([
    'not_found',
    'unauthorized',
    'insufficient_credits',
    'non_json_response',
    'unexpected_response',
    'unknown_outcome',
    'validation_failed',
  ] as const)('never retries %s', (code) => {
    expect(retryDelayMs(apiError(code), 0, policy(0.5))).toBeNull();
  });

  it('gives up after the configured retries', () => {
    expect(retryDelayMs(apiError('internal'), 5, policy(0.5))).toBeNull();
  });

  it('waits at least Retry-After, even when jitter is lower', () => {
    expect(retryDelayMs(apiError('rate_limited', 3000), 0, policy(0))).toBe(3000);
  });

  it('waits for a Retry-After above the backoff cap, up to maxRetryAfterMs', () => {
    expect(retryDelayMs(apiError('rate_limited', 10_000), 0, policy(0))).toBe(10_000);
  });

  it('does not wait for a Retry-After beyond maxRetryAfterMs', () => {
    expect(retryDelayMs(apiError('rate_limited', 10_001), 0, policy(0))).toBeNull();
  });
});

describe('retries of a client, under fake timers', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2025-01-01T00:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const svc = (random = 0.5) => mockService({ retry: { retries: 3, baseDelayMs: 1000, maxDelayMs: 8000, random: () => random } });
  const ok = { status: 200, data: { webhooks: [] } };

  it('retries a GET after a 503 with a jittered wait', async () => {
    const { client, reply, attempts } = svc(0.5);
    reply({ status: 503, data: {} });
    reply(ok);

    const state = track(client.listWebhooks());
    await vi.advanceTimersByTimeAsync(499);
    const before = attempts();
    await vi.advanceTimersByTimeAsync(1);

    expect(before).toBe(1);
    expect(attempts()).toBe(2);
    expect(state).toMatchObject({ done: true, value: [] });
  });

  it('honours Retry-After in seconds', async () => {
    const { client, reply, attempts } = svc(0);
    reply({ status: 429, data: {}, headers: { 'retry-after': '2' } });
    reply(ok);

    const state = track(client.listWebhooks());
    await vi.advanceTimersByTimeAsync(1999);
    const before = attempts();
    await vi.advanceTimersByTimeAsync(1);

    expect(before).toBe(1);
    expect(state).toMatchObject({ done: true, value: [] });
  });

  it('honours Retry-After as an HTTP date', async () => {
    const { client, reply, attempts } = svc(0);
    reply({ status: 503, data: {}, headers: { 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' } });
    reply(ok);

    const state = track(client.listWebhooks());
    await vi.advanceTimersByTimeAsync(4999);
    const before = attempts();
    await vi.advanceTimersByTimeAsync(1);

    expect(before).toBe(1);
    expect(state.done).toBe(true);
  });

  it('doubles the wait ceiling per attempt and caps it', async () => {
    const { client, reply, attempts } = mockService({ retry: { retries: 5, baseDelayMs: 1000, maxDelayMs: 3000, random: () => 0.9999 } });
    for (let i = 0; i < 5; i++) reply({ error: new undiciErrors.SocketError('other side closed') });
    reply(ok);

    const state = track(client.listWebhooks());
    const seenAt: number[] = [];
    for (let t = 0; t < 20_000 && !state.done; t += 1) {
      const n = attempts();
      await vi.advanceTimersByTimeAsync(1);
      if (attempts() !== n) seenAt.push(t + 1);
    }

    // waits: 999, 1999, 2999 (capped), 2999, 2999
    expect(seenAt).toEqual([999, 2998, 5997, 8996, 11995]);
    expect(state).toMatchObject({ done: true, value: [] });
  });

  it('gives up after the retries and throws the last error', async () => {
    const { client, reply, attempts } = svc(0);
    for (let i = 0; i < 4; i++) reply({ status: 500, data: { error: { code: 'internal', message: `boom ${i}` } } });

    const state = track(client.listWebhooks());
    await vi.advanceTimersByTimeAsync(60_000);

    expect(attempts()).toBe(4);
    expect(state.error).toMatchObject({ code: 'internal', message: expect.stringContaining('boom 3') });
  });

  it('surfaces a Retry-After beyond the cap without waiting', async () => {
    const { client, reply, attempts } = svc(0);
    reply({ status: 429, data: {}, headers: { 'retry-after': '3600' } });

    const state = track(client.listWebhooks());
    await vi.advanceTimersByTimeAsync(0);

    expect(attempts()).toBe(1);
    expect(state.error).toMatchObject({ code: 'rate_limited', retryAfterMs: 3_600_000 });
  });

  it.each<[string, (c: KnowledgeClient) => Promise<unknown>, unknown]>([
    ['updateDataset (PUT)', (c) => c.updateDataset({ name: 'n' }), { id: 1 }],
    ['setDatasetMode (PATCH)', (c) => c.setDatasetMode('1', '2', 'read_only'), { id: 2, mode: 'read_only' }],
    ['attachDataset (free POST)', (c) => c.attachDataset('1', { datasetId: '2' }), { id: 2, mode: 'read_only' }],
    ['testWebhook (free POST)', (c) => c.testWebhook('1'), { delivered: true, status: 200 }],
  ])('retries %s, free and idempotent by nature', async (_name, invoke, data) => {
    const { client, reply, attempts } = svc(0);
    reply({ error: new undiciErrors.SocketError('other side closed') });
    reply({ status: 503, data: {} });
    reply({ status: 200, data });

    const state = track(invoke(client));
    await vi.advanceTimersByTimeAsync(10);

    expect(attempts()).toBe(3);
    expect(state.done).toBe(true);
    expect(state.error).toBeUndefined();
  });
});

describe('paid calls are never retried', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const paidCalls: [string, (c: KnowledgeClient) => Promise<unknown>][] = [
    ['query', (c) => c.query({ query: 'q' })],
    ['queryBatch', (c) => c.queryBatch({ queries: ['q'] })],
    ['reindex', (c) => c.reindex()],
    ['reprocessFile', (c) => c.reprocessFile('1')],
    ['createAgent', (c) => c.createAgent({ name: 'a' })],
    ['updateAgentConfig', (c) => c.updateAgentConfig('1', {})],
    ['chat', (c) => c.chat('1', 'hi')],
    ['writeIntelligence', (c) => c.writeIntelligence({ agentId: '1', content: 'x' })],
    ['writeIntelligenceBatch', (c) => c.writeIntelligenceBatch({ agentId: '1', entries: [{ content: 'x' }] })],
  ];

  async function outcome(invoke: (c: KnowledgeClient) => Promise<unknown>, r: Parameters<ReturnType<typeof mockService>['reply']>[0]) {
    const { client, reply, attempts } = mockService({ retry: { retries: 5, random: () => 0 } });
    reply(r);
    const state = track(invoke(client));
    await vi.advanceTimersByTimeAsync(120_000);
    return { attempts: attempts(), error: state.error as ApiError };
  }

  it.each(paidCalls)('%s: a 503 is surfaced after one attempt, as unknown_outcome (the work may have been done)', async (_name, invoke) => {
    const r = await outcome(invoke, { status: 503, data: { error: { code: 'internal', message: 'down' } } });

    expect(r).toMatchObject({ attempts: 1, error: { code: 'unknown_outcome', status: 503, serverCode: 'internal' } });
  });

  it.each(paidCalls)('%s: a lost response is unknown_outcome', async (_name, invoke) => {
    const lost = new undiciErrors.SocketError('other side closed');

    const r = await outcome(invoke, { error: lost });

    expect(r).toMatchObject({ attempts: 1, error: { code: 'unknown_outcome', status: null } });
    expect(r.error.cause).toBe(lost);
  });

  it.each([
    ['headers timeout', 'unknown_outcome', new undiciErrors.HeadersTimeoutError()],
    ['body timeout', 'unknown_outcome', new undiciErrors.BodyTimeoutError()],
    ['connection reset', 'unknown_outcome', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['connection refused (never sent)', 'network', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['connect timeout (never sent)', 'timeout', new undiciErrors.ConnectTimeoutError()],
  ])('a paid POST with a %s → %s', async (_name, code, error) => {
    const r = await outcome((c) => c.query({ query: 'q' }), { error });

    expect(r).toMatchObject({ attempts: 1, error: { code } });
  });

  it.each([502, 504])('a paid POST answered %i by a gateway is unknown_outcome', async (status) => {
    const r = await outcome((c) => c.chat('1', 'hi'), { status, data: '<html>bad gateway</html>' });

    expect(r).toMatchObject({ attempts: 1, error: { code: 'unknown_outcome', status } });
  });

  it('a 429 on a paid POST is rate_limited with retryAfterMs, not retried', async () => {
    const r = await outcome((c) => c.query({ query: 'q' }), { status: 429, data: {}, headers: { 'retry-after': '5' } });

    expect(r).toMatchObject({ attempts: 1, error: { code: 'rate_limited', retryAfterMs: 5000, status: 429 } });
  });

  it('createWebhook (free, not idempotent) is sent once; a lost answer is unknown_outcome', async () => {
    const r = await outcome((c) => c.createWebhook({ url: 'https://h.test' }), { error: new undiciErrors.SocketError('closed') });

    expect(r).toMatchObject({ attempts: 1, error: { code: 'unknown_outcome' } });
  });

  it('a GET with the same lost response is retried instead', async () => {
    const { client, reply, attempts } = mockService({ retry: { retries: 1, random: () => 0 } });
    reply({ error: new undiciErrors.SocketError('other side closed') });
    reply({ status: 200, data: { agents: [] } });

    const state = track(client.listAgents());
    await vi.advanceTimersByTimeAsync(0);

    expect(attempts()).toBe(2);
    expect(state).toMatchObject({ done: true, value: [] });
  });
});
