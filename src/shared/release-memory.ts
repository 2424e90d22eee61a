// node:v8 and node:vm are read at their first use (process.getBuiltinModule): an ES import loads
// them, and the service's start, which imports this module, needs neither before it listens.
const v8 = () => process.getBuiltinModule('node:v8');

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

let gcFunction: GcFunction | null | undefined;

/** V8's `gc`, exposed once at run time (as `--expose-gc` would at start); null where V8 refuses. */
function gcOf(): GcFunction | null {
  if (gcFunction !== undefined) return gcFunction;
  try {
    v8().setFlagsFromString('--expose-gc');
    const fn: unknown = process.getBuiltinModule('node:vm').runInNewContext('gc');
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
 * A large sync grows that generation to its maximum and an ordinary collection keeps it at that size,
 * so a daemon that has finished its cycle would sit on empty heap until V8's memory reducer runs,
 * seconds later or not at all (RSS at ready: docs/benchmarks.md). For a long-lived process between bursts of work only (`kbsync watch` after a sync cycle): a one-shot
 * command exits instead. Does nothing when the heap is small (`minHeapBytes`) or V8 gives no `gc`.
 * Returns true when it collected.
 */
export function releaseMemory(minHeapBytes: number = RELEASE_MIN_HEAP_BYTES): boolean {
  if (v8().getHeapStatistics().total_heap_size < minHeapBytes) return false;
  const gc = gcOf();
  if (gc === null) return false;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}

/**
 * Keeps V8's young generation at its start size for the rest of the process, instead of letting it
 * grow under a sync's allocation. A sync keeps most of what it allocates (the walk's files, the
 * plan's items) until its end, so a large young generation only copies the same survivors again
 * before promoting them: a higher peak for no gain in time. For a long-lived process (`kbsync watch`), where memory is the cost that lasts. V8 reads this flag each
 * time it would grow the young generation, so setting it at run time takes effect (a V8 without it
 * would print "unrecognized flag" once and go on as before).
 */
export function keepYoungGenerationSmall(): void {
  v8().setFlagsFromString('--semi-space-growth-factor=1');
  keptSmall = true;
}

/** True once keepYoungGenerationSmall() pinned the young generation. */
let keptSmall = false;
/** V8's own --semi-space-growth-factor. */
const DEFAULT_GROWTH_FACTOR = 2;

/**
 * Runs `work` with the young generation free to grow as V8 grows it by default, then pinned again
 * (when keepYoungGenerationSmall() pinned it; otherwise `work` just runs). For work that allocates a
 * lot and keeps almost none of it: the daemon's full cycle over a kept index, whose walk drops each
 * unchanged file once lstat'ed, nearly all of it dead soon after). A scavenge costs what survives it
 * and a pinned young generation is scavenged over and over for that work, a large share of a rescan.
 * The caller gives the grown young generation back after (releaseMemory).
 */
export async function whileYoungGenerationGrows<T>(work: () => Promise<T>): Promise<T> {
  if (!keptSmall) return work();
  v8().setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  try {
    return await work();
  } finally {
    v8().setFlagsFromString('--semi-space-growth-factor=1');
  }
}
