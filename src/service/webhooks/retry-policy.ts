/**
 * Waits between attempts, as docs/api.md lists them: 1 s, 5 s, 30 s, 2 min, 10 min. Every listed wait is
 * used (the lead's reading of "5 attempts with backoff"): the first attempt plus 5 retries.
 */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000] as const;

/** Attempts per delivery, the first included (1 + one retry per listed wait); after the last failure the delivery is `failed`. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The wait after failed attempt number `attempt` (1-based), or null when no attempt is left. */
export function retryDelayMs(attempt: number): number | null {
  if (attempt >= MAX_DELIVERY_ATTEMPTS) return null;
  return RETRY_DELAYS_MS[attempt - 1] ?? null;
}
