/**
 * A stat's modification time as kbsync records it in a fingerprint: nanoseconds as Node's number
 * stats carry them (a double of milliseconds, good to about a quarter of a microsecond), rounded
 * to an integer, as a decimal string. Number stats cost a quarter less than BigInt ones and
 * allocate no BigInts, and an unchanged plan makes one per file. Every producer of a fingerprint
 * (the walk, git sources, the hasher's checks) derives it this way, so equal times compare equal.
 */
export function mtimeNsOf(stats: { mtimeMs: number }): string {
  return mtimeNsOfMs(stats.mtimeMs);
}

/** mtimeNsOf, from the time in milliseconds. */
export function mtimeNsOfMs(mtimeMs: number): string {
  return String(Math.round(mtimeMs * 1e6));
}
