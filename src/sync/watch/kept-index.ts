import type { StateStore } from '../state/index.js';
import type { TrackedIndex } from '../tracked-index.js';
import type { PlanItem } from '../types.js';

/** Past this many rows to read again, the whole index is read again instead (one bulk read beats many lookups). */
export const KEPT_INDEX_MAX_UPDATES = 2000;

/** Items whose row a sync never writes: a path skipped that was not tracked. */
const NO_WRITE = new Set(['skip:unsupported', 'skip:too-large', 'skip:ignored', 'skip:secret', 'skip:unreadable']);

/**
 * Brings the tracked index a daemon keeps between cycles up to date with what a cycle wrote: the row of
 * every path the cycle's items may have written (an upload, a rename and the path it left, a delete,
 * a duplicate, a fingerprint that moved...) is read again from the state. A delta cycle's items are
 * only those, so this costs a lookup per changed file, not a 100k-row read. False (the index is then
 * not to be used) when there are more than `max`: the caller reads the whole index again.
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
  for (const [source, path] of keys) index.put(source, path, state.getTracked(source, path));
  return true;
}
