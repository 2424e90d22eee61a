import { setFlagsFromString } from 'node:v8';
import { keepYoungGenerationSmall } from '../shared/release-memory.js';

/** The old generation may grow to this much more than what survived its last full collection (V8 picks 1.1-4× on its own). */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Keeps the JavaScript heap near what is in use, for the rest of the process: `kbsync serve`, a
 * long-running server, calls it at start, and bench/ingest-formats.ts does the same so that it
 * measures the service as it runs. Two V8 flags, which V8 reads each time it sizes the heap, so
 * setting them after start takes effect (a V8 without one prints "unrecognized flag" once and goes on):
 * - the young generation stays at its start size: under ingest's fast allocation (parsed records,
 *   chunk texts, vectors) V8 grew each semi-space from 8 to 64 MB and kept them, 134 MB of a 187 MB
 *   heap of which at most 106 MB was in use;
 * - the old generation grows by HEAP_GROWING_PERCENT at most between full collections: what ingest
 *   promotes (a batch of chunks waiting for its transaction) dies soon after, and with V8's own
 *   factor the old generation filled with it to 40-75 MB before a full collection.
 * A 200 MiB CSV peaked at 290-305 MB RSS without them and well under 250 MB with them, at the same
 * throughput (docs/benchmarks.md).
 */
export function keepHeapSmall(): void {
  keepYoungGenerationSmall();
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
