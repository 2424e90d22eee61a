import { describe, expect, it } from 'vitest';
import { MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from './retry-policy.js';

describe('retry policy (docs/api.md: 1 s, 5 s, 30 s, 2 min, 10 min)', () => {
  it('makes 6 attempts in all: the first and one retry after each listed wait', () => {
    expect(MAX_DELIVERY_ATTEMPTS).toBe(RETRY_DELAYS_MS.length + 1);
    expect(MAX_DELIVERY_ATTEMPTS).toBe(6);
  });

  it.each([
    [1, 1_000],
    [2, 5_000],
    [3, 30_000],
    [4, 120_000],
    [5, 600_000],
    [6, null],
    [7, null],
  ])('after failed attempt %i waits %s ms', (attempt, delay) => {
    expect(retryDelayMs(attempt)).toBe(delay);
  });
});
