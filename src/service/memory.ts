import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at its start size for the rest of the process (`kbsync serve`, a
 * long-running server, calls it at start; bench/ingest-formats.ts does the same to measure the
 * service as it runs). Ingest allocates fast (parsed records, chunk texts, vectors) and under that V8
 * grows each semi-space from 8 to 64 MB (Node 24, a machine with plenty of memory), which it then
 * keeps: ingesting a CSV, the young generation reached 134 MB of the 187 MB heap while at most 106 MB
 * of it was in use, and peak RSS was 290-305 MB. Kept small, a 200 MiB CSV peaks well under 250 MB
 * (docs/benchmarks.md) with no loss of throughput: what survives the young generation's collections is
 * mostly the batches waiting for their transaction, which are promoted either way. V8 reads the flag
 * each time it would grow the young generation, so setting it after start takes effect (a V8 without
 * it prints "unrecognized flag" once and goes on as before).
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
