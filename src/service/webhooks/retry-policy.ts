/** Attempts per delivery, the first included; after the last failure the delivery is `failed`. */
export const MAX_DELIVERY_ATTEMPTS = 5;

/**
 * Waits between attempts (API.md: 1 s, 5 s, 30 s, 2 min, 10 min). With 5 attempts in all only the
 * first four waits are used; the fifth would serve a sixth attempt if MAX_DELIVERY_ATTEMPTS grew.
 */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000] as const;

/** The wait after failed attempt number `attempt` (1-based), or null when no attempt is left. */
export function retryDelayMs(attempt: number): number | null {
  if (attempt >= MAX_DELIVERY_ATTEMPTS) return null;
  return RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] ?? null;
}
