/** Past this long at the configured rate, a cycle's paid calls get a line saying how long they take. */
export const PACE_LINE_MIN_SECONDS = 10;

/**
 * How long `calls` paid calls take at upload.requestsPerSecond (the queue's rate: a rate above 1 rounded
 * down, below 1 one call per 1000/rate ms rounded up), in a line for the log (`2,000 uploads at 5/s:
 * about 7 min`); null when that is shorter than PACE_LINE_MIN_SECONDS. A lower bound: the service's
 * own pace and pauses (429) come on top.
 */
export function paceLine(calls: number, requestsPerSecond: number): { seconds: number; line: string } | null {
  const perSecond = requestsPerSecond >= 1 ? Math.floor(requestsPerSecond) : 1000 / Math.ceil(1000 / requestsPerSecond);
  if (calls / perSecond < PACE_LINE_MIN_SECONDS) return null;
  const seconds = Math.round(calls / perSecond);
  const eta = seconds < 90 ? `${seconds} s` : seconds < 5400 ? `${Math.round(seconds / 60)} min` : `${(seconds / 3600).toFixed(1)} h`;
  const rate = perSecond >= 1 ? `${perSecond}/s` : `1 every ${Math.round(1 / perSecond)} s`;
  return { seconds, line: `${calls.toLocaleString('en-US')} uploads at ${rate}: about ${eta}` };
}
