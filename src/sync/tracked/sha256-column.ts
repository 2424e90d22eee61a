/** Up to this many wanted hashes, rowsHolding searches the bytes once per hash; more, one pass looks each row up. */
const FEW_WANTED = 8;
const WIDTH = 32;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** True when `sha256` is 64 lowercase hex digits: the form the column holds as 32 bytes. */
const isHex = (sha256: string): boolean => sha256.length === 64 && SHA256_HEX.test(sha256);

/**
 * TrackedIndex's sha256 column: 32 bytes a row in one buffer, outside the JavaScript heap, instead of
 * a 64-character string a row (about 100 bytes with its slot, copied by each GC). A value that is
 * not 64 lowercase hex digits (a test's, a file rebuilt from a listing without one) is kept as it is,
 * aside; its row's bytes are zero and never match. Rows are read back as the same lowercase hex.
 */
export class Sha256Column {
  #bytes: Buffer;
  #length: number;
  /** The rows whose value is not hex, by row number; null while there is none. */
  #odd: Map<number, string> | null = null;

  private constructor(bytes: Buffer, length: number) {
    this.#bytes = bytes;
    this.#length = length;
  }

  static empty(): Sha256Column {
    return new Sha256Column(Buffer.alloc(0), 0);
  }

  /**
   * The column of `count` hashes given as concatenated hex (either case, 64 digits each, as a store
   * reads them). Throws, naming `what`, when they are not that.
   */
  static fromHex(hex: string, count: number, what: string): Sha256Column {
    const bytes = Buffer.from(hex, 'hex');
    if (hex.length !== count * 64 || bytes.length !== count * WIDTH)
      throw new Error(
        `${what}: sha256 holds ${hex.length} characters, ${bytes.length * 2} of them hex digits, for ${count} files (64 each)`,
      );
    return new Sha256Column(bytes, count);
  }

  /** The column of these values, in order. */
  static of(values: readonly string[]): Sha256Column {
    const column = new Sha256Column(Buffer.alloc(values.length * WIDTH), 0);
    for (const value of values) column.set(column.length, value);
    return column;
  }

  get length(): number {
    return this.#length;
  }

  /** The value of row `row`. */
  at(row: number): string {
    if (row < 0 || row >= this.#length || !Number.isInteger(row)) throw new RangeError(`no sha256 row ${row} (${this.#length} rows)`);
    const odd = this.#odd?.get(row);
    return odd ?? this.#bytes.toString('hex', row * WIDTH, row * WIDTH + WIDTH);
  }

  /** Sets row `row`, or appends a row when `row` is the length. */
  set(row: number, value: string): void {
    if (row < 0 || row > this.#length || !Number.isInteger(row)) throw new RangeError(`no sha256 row ${row} (${this.#length} rows)`);
    if (row === this.#length) {
      this.#reserve(row + 1);
      this.#length++;
    }
    if (isHex(value)) {
      this.#bytes.write(value, row * WIDTH, WIDTH, 'hex');
      this.#odd?.delete(row);
      return;
    }
    this.#bytes.fill(0, row * WIDTH, row * WIDTH + WIDTH);
    (this.#odd ??= new Map()).set(row, value);
  }

  /** Inserts a row at `at` (its value set next), moving the rows after it down by one. */
  insert(at: number): void {
    this.#reserve(this.#length + 1);
    this.#bytes.copyWithin((at + 1) * WIDTH, at * WIDTH, this.#length * WIDTH);
    this.#bytes.fill(0, at * WIDTH, at * WIDTH + WIDTH);
    this.#length++;
    this.#shiftOdd(at, 1);
  }

  /** Removes row `at`, moving the rows after it up by one. */
  remove(at: number): void {
    this.#odd?.delete(at);
    this.#bytes.copyWithin(at * WIDTH, (at + 1) * WIDTH, this.#length * WIDTH);
    this.#length--;
    this.#shiftOdd(at + 1, -1);
  }

  /** A new column: these rows, then `other`'s. */
  concat(other: Sha256Column): Sha256Column {
    return Sha256Column.joined([this, other]);
  }

  /** A new column of the parts' rows, part after part. */
  static joined(parts: readonly Sha256Column[]): Sha256Column {
    const out = new Sha256Column(Buffer.concat(parts.map((p) => p.#used())), 0);
    for (const part of parts) {
      for (const [row, value] of part.#odd ?? []) (out.#odd ??= new Map()).set(out.#length + row, value);
      out.#length += part.#length;
    }
    return out;
  }

  /** A new column of the rows `order` names, in that order. */
  picked(order: readonly number[]): Sha256Column {
    const bytes = Buffer.alloc(order.length * WIDTH);
    const out = new Sha256Column(bytes, order.length);
    for (let k = 0; k < order.length; k++) {
      const row = order[k] as number;
      this.#bytes.copy(bytes, k * WIDTH, row * WIDTH, row * WIDTH + WIDTH);
      const odd = this.#odd?.get(row);
      if (odd !== undefined) (out.#odd ??= new Map()).set(k, odd);
    }
    return out;
  }

  /**
   * The rows whose value is one of `wanted`, in row order. A few hashes (a change the daemon saw)
   * are each searched for in the bytes by Buffer.indexOf; more are looked up row by row, by their
   * first six bytes, with no string made per row.
   */
  rowsHolding(wanted: ReadonlySet<string>): number[] {
    const rows: number[] = [];
    if (wanted.size === 0 || this.#length === 0) return rows;
    const needles: Buffer[] = [];
    for (const w of wanted) if (isHex(w)) needles.push(Buffer.from(w, 'hex'));
    const bytes = this.#used();
    const odd = this.#odd;
    if (needles.length <= FEW_WANTED) {
      for (const needle of needles) {
        let at = bytes.indexOf(needle);
        while (at >= 0) {
          const row = Math.floor(at / WIDTH);
          if (at % WIDTH === 0 && odd?.has(row) !== true) rows.push(row);
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
      for (let row = 0; row < this.#length; row++) {
        const same = byPrefix.get(bytes.readUIntBE(row * WIDTH, 6));
        if (same === undefined) continue;
        const from = row * WIDTH;
        if (same.some((needle) => bytes.compare(needle, 0, WIDTH, from, from + WIDTH) === 0) && odd?.has(row) !== true) rows.push(row);
      }
    }
    for (const [row, value] of odd ?? []) if (wanted.has(value)) rows.push(row);
    return rows.sort((a, b) => a - b);
  }

  /** The bytes of the rows (not the room kept for more). */
  #used(): Buffer {
    return this.#bytes.subarray(0, this.#length * WIDTH);
  }

  /** Room for `rows` rows, grown by half again at least, so that appends one by one stay linear. */
  #reserve(rows: number): void {
    if (rows * WIDTH <= this.#bytes.length) return;
    const grown = Buffer.alloc(Math.max(rows, Math.ceil(this.#length * 1.5), 16) * WIDTH);
    this.#bytes.copy(grown, 0, 0, this.#length * WIDTH);
    this.#bytes = grown;
  }

  /** Moves the odd values of rows from `from` on by `by` rows. */
  #shiftOdd(from: number, by: number): void {
    if (this.#odd === null || this.#odd.size === 0) return;
    const moved = new Map<number, string>();
    for (const [row, value] of this.#odd) moved.set(row >= from ? row + by : row, value);
    this.#odd = moved;
  }
}
