import type { TrackedIndex } from '../tracked/tracked-index.js';
import { compareByPath } from '../tracked/keys.js';
import type { PlanItem } from '../types.js';
import { unchangedItemAt } from './observed.js';

/**
 * The unchanged files a delta plan counted instead of listing (SyncPlan.unchangedNotListed), as rows
 * of the tracked index it was planned from: a report that lists every item makes their items from
 * the rows as it writes them, one at a time, so that a plan of a million unchanged files holds a
 * bit per file, not an item.
 */
export type UnlistedRows = {
  tracked: TrackedIndex;
  /** 1 for each row whose file was counted, by row number. */
  rows: Uint8Array;
  /** How many rows are flagged: the plan's unchangedNotListed. */
  count: number;
  /** The sources of those rows, in name order. */
  sources: readonly string[];
};

/** UnlistedRows over `rows` (Delta.unlisted) of `tracked`. */
export function unlistedRows(tracked: TrackedIndex, rows: Uint8Array): UnlistedRows {
  if (rows.length !== tracked.size) throw new Error(`unlisted rows: ${rows.length} flags for ${tracked.size} tracked rows`);
  const sources: string[] = [];
  let count = 0;
  // Rows are in (source, path) order: a source's rows are one run, so a new source shows as a change.
  for (let row = 0; row < rows.length; row++) {
    if (rows[row] !== 1) continue;
    count += 1;
    const source = tracked.sourceAt(row);
    if (sources[sources.length - 1] !== source) sources.push(source);
  }
  return { tracked, rows, count, sources };
}

/**
 * The plan's items with the unlisted rows' items merged in, in (source, path) order: the items the
 * full plan of the same pass lists. Both lists are in that order (SyncPlan.items, the index's rows).
 */
export function* withUnlisted<T extends PlanItem>(
  items: readonly T[],
  unlisted: UnlistedRows | null,
  itemOf: (item: PlanItem) => T,
): Generator<T> {
  if (unlisted === null) {
    for (let i = 0; i < items.length; i++) yield items[i] as T;
    return;
  }
  const { tracked, rows } = unlisted;
  let i = 0;
  let row = nextRow(rows, 0);
  while (row < rows.length) {
    const item = itemOf(unchangedItemAt(tracked, row));
    while (i < items.length && compareByPath(items[i] as T, item) < 0) yield items[i++] as T;
    if (i < items.length && compareByPath(items[i] as T, item) === 0)
      throw new Error(`plan: ${item.source}/${item.path} is both listed and counted as unchanged`);
    yield item;
    row = nextRow(rows, row + 1);
  }
  while (i < items.length) yield items[i++] as T;
}

/** The plan item as it is (withUnlisted's `itemOf` for a plan). */
export const asPlanItem = (item: PlanItem): PlanItem => item;

/** The first flagged row at or after `from`; rows.length when none. */
function nextRow(rows: Uint8Array, from: number): number {
  const at = rows.indexOf(1, from);
  return at < 0 ? rows.length : at;
}
