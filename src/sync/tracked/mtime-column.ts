import { PackedColumn, type ColumnCodec } from './packed-column.js';

/** Bytes a row: the digits before the last nine as a double (exact to 15 of them), the last nine as an int32. */
const WIDTH = 12;
/** The last parse's parts (parseMtime): module state, so that the walk's comparison of each file allocates nothing. */
let parsedHigh = 0;
let parsedLow = 0;

/**
 * Parses text[start, end), a decimal integer in its one canonical form (an optional "-", no leading
 * zero, at most 24 digits), into parsedHigh and parsedLow, whose sign both carry; false for any other text.
 */
function parseMtime(text: string, start = 0, n = text.length): boolean {
  const negative = n > start && text.charCodeAt(start) === 45;
  let i = negative ? start + 1 : start;
  const digits = n - i;
  if (digits < 1 || digits > 24 || (text.charCodeAt(i) === 48 && (digits > 1 || negative))) return false;
  const split = n - 9;
  let high = 0;
  let low = 0;
  for (; i < n; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (i < split) high = high * 10 + d;
    else low = low * 10 + d;
  }
  parsedHigh = negative && high !== 0 ? -high : high;
  parsedLow = negative ? -low : low;
  return true;
}

/**
 * TrackedIndex's mtimes (nanoseconds as decimal text): 12 bytes a row, exact, where a string, its
 * slot and its share of the text it was split from took about 60. Read back as the same text; a
 * text in any other form (a test's "", a leading zero) is kept aside.
 */
export const MTIME_CODEC: ColumnCodec = {
  width: WIDTH,
  encode(value, into, at) {
    if (!parseMtime(value)) return false;
    writeParsed(into, at);
    return true;
  },
  decode(from, at) {
    const high = from.readDoubleLE(at);
    const low = from.readInt32LE(at + 8);
    return high === 0 ? String(low) : `${high}${String(Math.abs(low)).padStart(9, '0')}`;
  },
};

function writeParsed(into: Buffer, at: number): void {
  into.writeDoubleLE(parsedHigh, at);
  into.writeInt32LE(parsedLow, at + 8);
}

/** An mtime column of these values, in order. */
export const mtimeColumn = (values: Iterable<string>): PackedColumn => PackedColumn.of(MTIME_CODEC, values);

/**
 * The mtime column of `count` values joined by `separator` (as a store reads them), parsed in place:
 * no string is made per value. Throws, naming `what`, when the text does not hold `count` values.
 */
export function mtimeColumnOfText(joined: string, count: number, separator: string, what: string): PackedColumn {
  const bytes = Buffer.alloc(count * WIDTH);
  const column = new PackedColumn(MTIME_CODEC, bytes, count);
  const wrong = (): Error => new Error(`${what}: mtime_ns does not hold ${count} values joined by ${JSON.stringify(separator)}`);
  if (count === 0 && joined !== '') throw wrong();
  let start = 0;
  for (let row = 0; row < count; row++) {
    if (start > joined.length) throw wrong();
    let end = joined.indexOf(separator, start);
    if (end < 0) end = joined.length;
    else if (row === count - 1) throw wrong();
    if (parseMtime(joined, start, end)) writeParsed(bytes, row * WIDTH);
    else column.set(row, joined.slice(start, end));
    start = end + separator.length;
  }
  return column;
}

/** True when row `row` of an mtime column holds `text`: compared as parsed, with no string made. */
export function sameMtime(column: PackedColumn, row: number, text: string): boolean {
  const odd = column.oddAt(row);
  if (odd !== undefined) return odd === text;
  if (!parseMtime(text)) return false;
  const view = column.view;
  const at = row * WIDTH;
  return view.getFloat64(at, true) === parsedHigh && view.getInt32(at + 8, true) === parsedLow;
}
