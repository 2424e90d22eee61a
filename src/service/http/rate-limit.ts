/** A token bucket per caller: `perMinute` requests, refilled continuously. */
export type RateLimiter = { take(caller: string): { ok: true } | { ok: false; retryAfterSeconds: number } };

/** Creates a limiter allowing `perMinute` requests per caller per minute (bursts up to `perMinute`). */
export function createRateLimiter(perMinute: number, clock: () => number): RateLimiter {
  const ratePerMs = perMinute / 60_000;
  const buckets = new Map<string, { tokens: number; atMs: number }>();
  return {
    take(caller) {
      const now = clock();
      const bucket = buckets.get(caller) ?? { tokens: perMinute, atMs: now };
      bucket.tokens = Math.min(perMinute, bucket.tokens + Math.max(0, now - bucket.atMs) * ratePerMs);
      bucket.atMs = now;
      buckets.set(caller, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { ok: true };
      }
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerMs / 1000)) };
    },
  };
}
