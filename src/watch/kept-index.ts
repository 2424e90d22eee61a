import type { StateStore } from '../sync/state/index.js';
import type { TrackedIndex } from '../sync/tracked/tracked-index.js';
import type { PlanItem } from '../sync/types.js';

/** Past this many rows to read again, the whole index is read again instead (one bulk read beats many lookups). */
const KEPT_INDEX_MAX_UPDATES = 2000;
/**
 * Past this many row moves (rows inserted or removed, times the rows of the index: each moves the
 * columns' tails), the whole index is read again instead: 100 new files in a 100k-row index.
 */
const KEPT_INDEX_MAX_MOVES = 10_000_000;

/** Items whose row a sync never writes: a path skipped that was not tracked. */
const NO_WRITE = new Set([
  'skip:empty',
  'skip:unsupported',
  'skip:too-large',
  'skip:ignored',
  'skip:secret',
  'skip:unreadable',
  'skip:bad-name',
]);

/**
 * Brings the tracked index a daemon keeps between cycles up to date with what a cycle wrote: the row of
 * every path the cycle's items may have written (an upload, a rename and the path it left, a delete,
 * a duplicate, a fingerprint that moved...) is read again from the state. A delta cycle's items are
 * only those, so this costs a lookup per changed file, not a 100k-row read. False (the index is then
 * not to be used) past `max` rows, or when the rows to insert or remove would move too much of a large
 * index: the caller reads the whole index again.
 */
export function refreshKeptIndex(
  index: TrackedIndex,
  items: readonly PlanItem[],
  state: StateStore,
  max = KEPT_INDEX_MAX_UPDATES,
): boolean {
  const keys: [string, string][] = [];
  for (const item of items) {
    if (item.wasTracked || !NO_WRITE.has(item.action)) keys.push([item.source, item.path]);
    if (item.renamedFrom !== undefined) keys.push([item.renamedFrom.source, item.renamedFrom.path]);
    if (keys.length > max) return false;
  }
  const rows = keys.map(([source, path]) => ({ source, path, file: state.getTracked(source, path) }));
  const moves = rows.filter((r) => (r.file === null) !== index.rowOf(r.source, r.path) < 0).length * index.size;
  if (moves > KEPT_INDEX_MAX_MOVES) return false;
  for (const r of rows) index.put(r.source, r.path, r.file);
  return true;
}
