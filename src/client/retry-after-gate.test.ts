import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockService } from './mock-service.test-util.js';
import { endpointOf } from './retry-after-gate.js';

/** Settles a promise into a value the test can inspect while timers are fake. */
function track<T>(p: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (value) => Object.assign(state, { done: true, value }),
    (error: unknown) => Object.assign(state, { done: true, error }),
  );
  return state;
}

const listing = { status: 200, data: { files: [], total: 0 } };
const refused = (seconds: number) => ({
  status: 429,
  data: { error: { code: 'rate_limited', message: 'slow down' } },
  headers: { 'retry-after': String(seconds) },
});

describe('endpointOf', () => {
  it('names a call by method, API version and route, so that every id shares one endpoint', () => {
    expect(endpointOf({ method: 'POST', api: 'v1', path: '/files/7/reprocess', route: '/files/{id}/reprocess' })).toBe(
      'POST v1 /files/{id}/reprocess',
    );
    expect(endpointOf({ method: 'POST', api: 'v1', path: '/files/upload' })).toBe('POST v1 /files/upload');
  });
});

describe('a 429 closes its endpoint until Retry-After has passed', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2025-01-01T00:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a free call to the same endpoint, started inside the window, is sent only when it has passed', async () => {
    const { client, reply, seen } = mockService({ retry: { retries: 3, random: () => 0 } });
    reply(refused(2));
    reply(listing);
    reply(listing);

    const first = track(client.listFiles());
    await vi.advanceTimersByTimeAsync(500);
    const second = track(client.listFiles());
    await vi.advanceTimersByTimeAsync(1_499);
    const sentInWindow = seen.length;
    await vi.advanceTimersByTimeAsync(1);

    expect(sentInWindow).toBe(1);
    expect(seen.map((r) => r.path)).toEqual(['/api/v1/ext/files/', '/api/v1/ext/files/', '/api/v1/ext/files/']);
    expect(first).toMatchObject({ done: true, value: { files: [] } });
    expect(second).toMatchObject({ done: true, value: { files: [] } });
  });

  it('another endpoint is not held', async () => {
    const { client, reply, seen } = mockService({ retry: { retries: 3, random: () => 0 } });
    reply(refused(2));
    reply({ status: 200, data: { agents: [] } });
    reply(listing);

    const files = track(client.listFiles());
    await vi.advanceTimersByTimeAsync(0);
    const agents = track(client.listAgents());
    await vi.advanceTimersByTimeAsync(0);

    expect(agents).toMatchObject({ done: true, value: [] });
    expect(files.done).toBe(false);
    expect(seen.map((r) => r.path)).toEqual(['/api/v1/ext/files/', '/api/v1/ext/agents/']);
  });

  it('a paid call is not sent inside the window of its endpoint (any id): rate_limited, with the time left, and nothing reaches the service', async () => {
    const { client, reply, seen } = mockService();
    reply(refused(5));

    const first = track(client.reprocessFile('1'));
    await vi.advanceTimersByTimeAsync(1_000);
    const second = track(client.reprocessFile('2'));
    await vi.advanceTimersByTimeAsync(0);

    expect(first.error).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 5_000 });
    expect(second.error).toMatchObject({ code: 'rate_limited', status: null, retryAfterMs: 4_000 });
    expect((second.error as Error).message).toMatch(/not sent.*POST v1 \/files\/\{id\}\/reprocess/);
    expect(seen.map((r) => r.path)).toEqual(['/api/v1/ext/files/1/reprocess']);
  });

  it('a window longer than maxRetryAfterMs is not waited for: the free call fails at once and sends nothing more', async () => {
    const { client, reply, seen } = mockService({ retry: { retries: 3, random: () => 0, maxRetryAfterMs: 10_000 } });
    reply(refused(60));

    const first = track(client.listFiles());
    await vi.advanceTimersByTimeAsync(0);
    const second = track(client.listFiles());
    await vi.advanceTimersByTimeAsync(0);

    expect(first.error).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 60_000 });
    expect(second.error).toMatchObject({ code: 'rate_limited', status: null, retryAfterMs: 60_000 });
    expect(seen).toHaveLength(1);
  });
});
