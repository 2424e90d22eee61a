/** How a PackedColumn holds its values: `width` bytes a row; `encode` false for a value it cannot hold (kept aside). */
export type ColumnCodec = {
  readonly width: number;
  encode(value: string, into: Buffer, at: number): boolean;
  decode(from: Buffer, at: number): string;
};

/**
 * A column of string values held in one buffer outside the JavaScript heap, a fixed number of bytes
 * a row, instead of a string and a slot a row (copied by every GC). A value the codec cannot hold
 * is kept aside as it is; its row's bytes are zero. Rows read back as the values set.
 */
export class PackedColumn {
  readonly codec: ColumnCodec;
  #bytes: Buffer;
  #length: number;
  /** The rows whose value the codec could not hold, by row number; null while there is none. */
  #odd: Map<number, string> | null = null;
  /** A DataView of #bytes, made when first asked for and again after #bytes is replaced. */
  #view: DataView | null = null;

  constructor(codec: ColumnCodec, bytes: Buffer = Buffer.alloc(0), length = 0) {
    this.codec = codec;
    this.#bytes = bytes;
    this.#length = length;
  }

  /** The column of these values, in order. */
  static of(codec: ColumnCodec, values: Iterable<string>): PackedColumn {
    const column = new PackedColumn(codec);
    for (const value of values) column.set(column.length, value);
    return column;
  }

  /** A new column of the parts' rows, part after part (the parts share one codec). */
  static joined(codec: ColumnCodec, parts: readonly PackedColumn[]): PackedColumn {
    const out = new PackedColumn(codec, Buffer.concat(parts.map((p) => p.bytes)), 0);
    for (const part of parts) {
      for (const [row, value] of part.#odd ?? []) (out.#odd ??= new Map()).set(out.#length + row, value);
      out.#length += part.#length;
    }
    return out;
  }

  get length(): number {
    return this.#length;
  }

  /** The bytes of the rows (not the room kept for more). */
  get bytes(): Buffer {
    return this.#bytes.subarray(0, this.#length * this.codec.width);
  }

  /**
   * The whole buffer as a DataView, rows then the room kept for more: for a reader of one row's bytes
   * that must not allocate (its reads compile to loads; Buffer's read methods check their arguments first).
   */
  get view(): DataView {
    return (this.#view ??= new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength));
  }

  /** The rows kept aside, with their values. */
  oddRows(): Iterable<[number, string]> {
    return this.#odd ?? [];
  }

  /** The value kept aside for row `row`, if its value is one the codec cannot hold. */
  oddAt(row: number): string | undefined {
    return this.#odd?.get(row);
  }

  /** The value of row `row`. */
  at(row: number): string {
    this.#check(row, this.#length - 1);
    return this.#odd?.get(row) ?? this.codec.decode(this.#bytes, row * this.codec.width);
  }

  /** Sets row `row`, or appends a row when `row` is the length. */
  set(row: number, value: string): void {
    this.#check(row, this.#length);
    const { width } = this.codec;
    if (row === this.#length) {
      this.#reserve(row + 1);
      this.#length++;
    }
    if (this.codec.encode(value, this.#bytes, row * width)) {
      this.#odd?.delete(row);
      return;
    }
    this.#bytes.fill(0, row * width, row * width + width);
    (this.#odd ??= new Map()).set(row, value);
  }

  /** Inserts a row at `at` (its value set next), moving the rows after it down by one. */
  insert(at: number): void {
    this.#check(at, this.#length);
    const { width } = this.codec;
    this.#reserve(this.#length + 1);
    this.#bytes.copyWithin((at + 1) * width, at * width, this.#length * width);
    this.#bytes.fill(0, at * width, at * width + width);
    this.#length++;
    this.#shiftOdd(at, 1);
  }

  /** Removes row `at`, moving the rows after it up by one. */
  remove(at: number): void {
    this.#check(at, this.#length - 1);
    const { width } = this.codec;
    this.#odd?.delete(at);
    this.#bytes.copyWithin(at * width, (at + 1) * width, this.#length * width);
    this.#length--;
    this.#shiftOdd(at + 1, -1);
  }

  /** A new column of the rows `order` names, in that order. */
  picked(order: readonly number[]): PackedColumn {
    const { width } = this.codec;
    const bytes = Buffer.alloc(order.length * width);
    const out = new PackedColumn(this.codec, bytes, order.length);
    for (let k = 0; k < order.length; k++) {
      const row = order[k] as number;
      this.#bytes.copy(bytes, k * width, row * width, row * width + width);
      const odd = this.#odd?.get(row);
      if (odd !== undefined) (out.#odd ??= new Map()).set(k, odd);
    }
    return out;
  }

  #check(row: number, last: number): void {
    if (!Number.isInteger(row) || row < 0 || row > last) throw new RangeError(`no row ${row} in a column of ${this.#length} rows`);
  }

  /** Room for `rows` rows, grown by half again at least, so that appends one by one stay linear. */
  #reserve(rows: number): void {
    const { width } = this.codec;
    if (rows * width <= this.#bytes.length) return;
    const grown = Buffer.alloc(Math.max(rows, Math.ceil(this.#length * 1.5), 16) * width);
    this.#bytes.copy(grown, 0, 0, this.#length * width);
    this.#bytes = grown;
    this.#view = null;
  }

  /** Moves the values kept aside of rows from `from` on by `by` rows. */
  #shiftOdd(from: number, by: number): void {
    if (this.#odd === null || this.#odd.size === 0) return;
    const moved = new Map<number, string>();
    for (const [row, value] of this.#odd) moved.set(row >= from ? row + by : row, value);
    this.#odd = moved;
  }
}

/** A column of TrackedIndex: an array of values, or a PackedColumn. The operations below take either. */
export type IndexColumn = unknown[] | PackedColumn;

/** The parts' rows in one new column, part after part (the parts are of one kind). */
export function joinedColumn(parts: readonly IndexColumn[]): IndexColumn {
  const first = parts[0];
  if (first instanceof PackedColumn) return PackedColumn.joined(first.codec, parts as PackedColumn[]);
  return ([] as unknown[]).concat(...(parts as unknown[][]));
}

/** A new column of the rows `order` names, in that order. */
export function pickedColumn(column: IndexColumn, order: readonly number[]): IndexColumn {
  return column instanceof PackedColumn ? column.picked(order) : order.map((row) => column[row]);
}

/** Inserts an empty row at `at` (its value set next), or removes row `at`; the rows after it move. */
export function spliceColumn(column: IndexColumn, at: number, insert: boolean): void {
  if (column instanceof PackedColumn) {
    if (insert) column.insert(at);
    else column.remove(at);
  } else if (insert) column.splice(at, 0, undefined);
  else column.splice(at, 1);
}
