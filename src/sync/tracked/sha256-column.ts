import { PackedColumn, type ColumnCodec } from './packed-column.js';
import { isSha256Hex } from './codec.js';

/** Up to this many wanted hashes, rowsHoldingSha256 searches the bytes once per hash; more, one pass looks each row up. */
const FEW_WANTED = 8;
const WIDTH = 32;

/**
 * TrackedIndex's sha256s: 32 bytes a row (a 64-character string and its slot took about 100), read
 * back as lowercase hex. A value that is not (a test's, a row rebuilt without one) is kept aside.
 */
export const SHA256_CODEC: ColumnCodec = {
  width: WIDTH,
  encode: (value, into, at) => isSha256Hex(value) && into.write(value, at, WIDTH, 'hex') === WIDTH,
  decode: (from, at) => from.toString('hex', at, at + WIDTH),
};

/** A sha256 column of these values, in order. */
export const sha256Column = (values: Iterable<string>): PackedColumn => PackedColumn.of(SHA256_CODEC, values);

/**
 * The sha256 column of `count` hashes given as concatenated hex (either case, 64 digits each, as a
 * store reads them). Throws, naming `what`, when they are not that.
 */
export function sha256ColumnOfHex(hex: string, count: number, what: string): PackedColumn {
  const bytes = Buffer.from(hex, 'hex');
  if (hex.length !== count * 64 || bytes.length !== count * WIDTH)
    throw new Error(`${what}: sha256 holds ${hex.length} characters, ${bytes.length * 2} of them hex digits, for ${count} files (64 each)`);
  return new PackedColumn(SHA256_CODEC, bytes, count);
}

/**
 * The rows of a sha256 column whose value is one of `wanted`, in row order. A few hashes (a change
 * the daemon saw) are each searched for in the bytes by Buffer.indexOf; more are looked up row by
 * row by their first six bytes, with no string made per row.
 */
export function rowsHoldingSha256(column: PackedColumn, wanted: ReadonlySet<string>): number[] {
  const rows: number[] = [];
  if (wanted.size === 0 || column.length === 0) return rows;
  const needles: Buffer[] = [];
  for (const w of wanted) if (isSha256Hex(w)) needles.push(Buffer.from(w, 'hex'));
  const { bytes } = column;
  // A row kept aside has zero bytes, which an all-zero hash would match.
  const held = (row: number): boolean => column.oddAt(row) === undefined;
  if (needles.length <= FEW_WANTED) {
    for (const needle of needles) {
      let at = bytes.indexOf(needle);
      while (at >= 0) {
        const row = Math.floor(at / WIDTH);
        if (at % WIDTH === 0 && held(row)) rows.push(row);
        at = bytes.indexOf(needle, (row + 1) * WIDTH);
      }
    }
  } else {
    const byPrefix = new Map<number, Buffer[]>();
    for (const needle of needles) {
      const key = needle.readUIntBE(0, 6);
      const same = byPrefix.get(key);
      if (same === undefined) byPrefix.set(key, [needle]);
      else same.push(needle);
    }
    for (let row = 0; row < column.length; row++) {
      const from = row * WIDTH;
      const same = byPrefix.get(bytes.readUIntBE(from, 6));
      if (same !== undefined && same.some((n) => bytes.compare(n, 0, WIDTH, from, from + WIDTH) === 0) && held(row)) rows.push(row);
    }
  }
  for (const [row, value] of column.oddRows()) if (wanted.has(value)) rows.push(row);
  return rows.sort((a, b) => a - b);
}
