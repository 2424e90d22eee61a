import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let gcFunction: GcFunction | null | undefined;

/** V8's `gc`, exposed once at run time (as `--expose-gc` would at start); null where V8 refuses. */
function gcOf(): GcFunction | null {
  if (gcFunction !== undefined) return gcFunction;
  try {
    setFlagsFromString('--expose-gc');
    const fn: unknown = runInNewContext('gc');
    gcFunction = typeof fn === 'function' ? (fn as GcFunction) : null;
  } catch {
    gcFunction = null;
  }
  return gcFunction;
}

/** Below this heap size a release is not worth its full collection. */
export const RELEASE_MIN_HEAP_BYTES = 64 << 20;

/**
 * Gives back to the system the heap a finished piece of work left behind, as V8 does under memory
 * pressure: one full collection of the "last resort" kind, which also shrinks the young generation.
 * A sync of 100k files grows that generation to its maximum (128 MB on Node 24 on a machine with
 * plenty of memory) and an ordinary collection keeps it at that size, so a daemon that has finished its
 * cycle would sit on ~200 MB of empty heap until V8's memory reducer runs, seconds later or not at
 * all. Measured at 100k files: RSS 330 MB before, ~140 MB after, in ~40 ms (docs/benchmarks.md).
 * For a long-lived process between bursts of work only (`kbsync watch` after a sync cycle): a one-shot
 * command exits instead. Does nothing when the heap is small (`minHeapBytes`) or V8 gives no `gc`.
 * Returns true when it collected.
 */
export function releaseMemory(minHeapBytes: number = RELEASE_MIN_HEAP_BYTES): boolean {
  if (getHeapStatistics().total_heap_size < minHeapBytes) return false;
  const gc = gcOf();
  if (gc === null) return false;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}
