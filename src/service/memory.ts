import { setFlagsFromString } from 'node:v8';
import { keepYoungGenerationSmall } from '../shared/release-memory.js';

/** The old generation may grow to this much more than what survived its last full collection (V8 picks its own factor, larger). */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Keeps the JavaScript heap near what is in use, for the rest of the process: `kbsync serve`, a
 * long-running server, calls it at start, and bench/ingest-formats.ts does the same so that it
 * measures the service as it runs. Two V8 flags, which V8 reads each time it sizes the heap, so
 * setting them after start takes effect (a V8 without one prints "unrecognized flag" once and goes on):
 * - the young generation stays at its start size: under ingest's fast allocation (parsed records,
 *   chunk texts, vectors) V8 grew each semi-space to its largest and kept them, most of a heap far
 *   larger than what was in use;
 * - the old generation grows by HEAP_GROWING_PERCENT at most between full collections: what ingest
 *   promotes (a batch of chunks waiting for its transaction) dies soon after, and with V8's own
 *   factor the old generation filled with it before a full collection.
 * A large CSV peaks lower with them, at the same throughput (bench/ingest-formats.ts, docs/benchmarks.md).
 */
export function keepHeapSmall(): void {
  keepYoungGenerationSmall();
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** How much the old generation may grow between full collections while a listing pages through a dataset. */
export const PAGING_HEAP_GROWING_PERCENT = 20;

/**
 * For the rest of a one-shot command whose live set stays flat while each step's allocation dies
 * with the step (`kbsync audit` paging through a listing of a million files): the heap stays nearer
 * what is in use, at the cost of more full collections, each over the flat live set.
 */
export function keepHeapNearLiveSet(): void {
  setFlagsFromString(`--heap-growing-percent=${PAGING_HEAP_GROWING_PERCENT}`);
}
