/** Past this depth a nested value is written as `…` (a Parquet schema this deep is not a table anyone reads). */
const MAX_DEPTH = 32;
const SIMPLE_KEY = /^[\p{L}\p{N}_.-]+$/u;

function isBinary(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

/** A value inside a list, map or struct: strings quoted, keys bare when they are simple words or numbers. */
function nested(value: unknown, depth: number): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (depth >= MAX_DEPTH) return '…';
  if (Array.isArray(value)) return `[${value.map((v) => nested(v, depth + 1)).join(',')}]`;
  if (isBinary(value) || value instanceof Date || typeof value !== 'object') return scalar(value);
  const entries = Object.entries(value as Record<string, unknown>).map(
    ([k, v]) => `${SIMPLE_KEY.test(k) ? k : JSON.stringify(k)}:${nested(v, depth + 1)}`,
  );
  return `{${entries.join(',')}}`;
}

function scalar(value: unknown): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'invalid date' : value.toISOString();
  if (isBinary(value)) return `(${value.length} bytes of binary data)`;
  return String(value);
}

/**
 * A Parquet value as readable text, or undefined for null: numbers and bigints as digits, dates in
 * ISO 8601, lists as `[1,2]`, maps and structs as `{key:value}`, strings bare at the top and quoted
 * inside lists and maps (`[[["a","b"]],[null]]`), a null inside them as `null`.
 */
export function parquetValueText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value) || (typeof value === 'object' && !isBinary(value) && !(value instanceof Date))) return nested(value, 0);
  return scalar(value);
}
