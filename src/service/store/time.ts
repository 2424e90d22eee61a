/** ISO-8601 UTC timestamp of a clock reading in ms. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
