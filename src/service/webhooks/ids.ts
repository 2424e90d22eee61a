/** A positive integer id from a number or a decimal string (path parameters arrive as strings), else null. */
export function parseId(value: number | string): number | null {
  const n = typeof value === 'number' ? value : /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}
