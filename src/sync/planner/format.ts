import { MIB } from '../../shared/plans.js';

/** Formatting of numbers, sizes and hashes for reasons and reports (locale-independent). */

/** An integer with thousands separators: 1990 → "1,990". */
export function formatCount(n: number): string {
  const [int = '', frac] = String(n).split('.');
  const sign = int.startsWith('-') ? '-' : '';
  const digits = sign ? int.slice(1) : int;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? `${sign}${grouped}` : `${sign}${grouped}.${frac}`;
}

/** A size as the spec counts it (1 MB = 1,048,576 bytes): "512 bytes", "12.5 KB", "120.3 MB", "100 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${formatCount(bytes)} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < MIB) return `${oneDecimal(bytes / 1024)} KB`;
  if (bytes < 1024 * MIB) return `${oneDecimal(bytes / MIB)} MB`;
  return `${oneDecimal(bytes / (1024 * MIB))} GB`;
}

/** Two sizes that must read differently (a file just over a limit): exact bytes when rounding hides the gap. */
export function formatBytesPair(a: number, b: number): [string, string] {
  const fa = formatBytes(a);
  const fb = formatBytes(b);
  return fa === fb && a !== b ? [`${formatCount(a)} bytes`, `${formatCount(b)} bytes`] : [fa, fb];
}

/**
 * The first 8 hex digits of a SHA-256, as git shortens hashes: "ab12cd34". ASCII, as every reason
 * the planner writes: one non-ASCII character makes V8 hold a whole `--json` chunk (256 items)
 * as a two-byte string, and changed files spread over a tree would make every chunk so (slower to write).
 */
export function shortSha(sha256: string): string {
  return sha256.slice(0, 8);
}

/** "1 file" / "3 files". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

function oneDecimal(x: number): string {
  const s = (Math.round(x * 10) / 10).toFixed(1);
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}
