/**
 * Retry-After windows per endpoint. After a 429, no new request to the same endpoint starts before its
 * Retry-After has passed; requests already sent may finish. An endpoint is a method and a route: the
 * path with its ids as `{id}` (`POST v1 /files/upload`, `POST v1 /files/{id}/reprocess`,
 * `POST v1 /datasets/reindex`, `GET v1 /files/`...), so a pause covers every file's reprocess, not one.
 */
export type RetryAfterGate = {
  /** Milliseconds until `endpoint` opens again (0 when it is open). */
  remainingMs(endpoint: string, nowMs: number): number;
  /** Closes `endpoint` until `untilMs`; a window already open longer stays as it is. */
  close(endpoint: string, untilMs: number): void;
};

export function createRetryAfterGate(): RetryAfterGate {
  const closedUntil = new Map<string, number>();
  return {
    remainingMs(endpoint, nowMs) {
      const until = closedUntil.get(endpoint);
      if (until === undefined) return 0;
      if (until > nowMs) return until - nowMs;
      closedUntil.delete(endpoint);
      return 0;
    },
    close(endpoint, untilMs) {
      closedUntil.set(endpoint, Math.max(untilMs, closedUntil.get(endpoint) ?? 0));
    },
  };
}

/** The endpoint of a call: its method, API version and route (the path with its ids as `{id}`). */
export function endpointOf(spec: { method: string; api: 'v1' | 'v2'; path: string; route?: string }): string {
  return `${spec.method} ${spec.api} ${spec.route ?? spec.path}`;
}
