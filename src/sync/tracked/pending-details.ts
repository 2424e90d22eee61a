import { errorText } from '../../shared/errors.js';
import type { RowDetails, TrackedDetails } from './columns.js';
import { checkLength, DETAIL_COLUMNS, type Rows } from './rows.js';

/** TrackedFiles of a block made with detailsOf before its details are decoded whole (a few lookups cost less than decoding every row). */
const ROW_DETAILS_MAX = 2048;

/** One source's rows whose detail columns are not decoded yet: rows start..start+count. */
type Block = {
  source: string;
  start: number;
  count: number;
  decode: () => TrackedDetails;
  detailsOf?: ((index: number) => RowDetails) | undefined;
  lookups: number;
};

/**
 * The detail columns (attempts, last action and reason, time) of a TrackedIndex that are still to be
 * read: a plan of unchanged files never reads them, so they are decoded when first needed, a row at a
 * time for the first few TrackedFiles made, then whole.
 */
export class PendingDetails {
  #blocks: Block[] = [];

  add(block: Omit<Block, 'lookups'>): void {
    this.#blocks.push({ ...block, lookups: 0 });
  }

  /** Makes sure the row has its details: looked up alone while its block allows, else all decoded. */
  ofRow(rows: Rows, row: number): void {
    const block = this.#blocks.find((b) => row >= b.start && row < b.start + b.count);
    if (block === undefined) return;
    if (block.detailsOf === undefined || block.lookups >= ROW_DETAILS_MAX) return this.decodeAll(rows);
    let d: RowDetails;
    try {
      d = block.detailsOf(row - block.start);
    } catch (err) {
      throw ofSource(block.source, err);
    }
    block.lookups++;
    DETAIL_COLUMNS.forEach((name, i) => (rows[name][row] = d[i]));
  }

  /**
   * Decodes the detail columns still pending, into their rows. A block is done only once it decoded
   * whole: one that fails (a damaged state) fails again at the next call, never leaving rows without
   * their details.
   */
  decodeAll(rows: Rows): void {
    const pending = this.#blocks;
    while (pending.length > 0) {
      const { source, start, count, decode } = pending[0] as Block;
      let details: TrackedDetails;
      try {
        details = decode();
      } catch (err) {
        throw ofSource(source, err);
      }
      for (const name of DETAIL_COLUMNS) checkLength(source, name, details[name].length, count);
      for (const name of DETAIL_COLUMNS) {
        const values = details[name];
        if (start === 0 && count === rows.paths.length) (rows[name] as unknown[]) = values;
        else {
          // Written from `start` on: the column first grows to it, so that it stays an array, not a sparse one.
          if (rows[name].length < start) rows[name].length = start;
          for (let i = 0; i < count; i++) rows[name][start + i] = values[i] as never;
        }
      }
      pending.shift();
    }
  }
}

/** A details error named after its source (once: an error that already names it is passed on). */
function ofSource(source: string, err: unknown): Error {
  const prefix = `tracked files of source "${source}": `;
  if (err instanceof Error && err.message.startsWith(prefix)) return err;
  return new Error(`${prefix}details: ${errorText(err)}`, { cause: err });
}
