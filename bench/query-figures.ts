import type { Figure } from './figure.js';
import { info } from './figure.js';
import type { QueryBenchResult } from './query.js';

/** The p95 target: under 50 ms at 100k chunks on one core. */
export const MAX_QUERY_P95_MS_AT_100K = 50;

/** Figures of bench/query.ts: p50 and p95 per size (p95 at 100k against its target), first query after a write. */
export function queryFigures(r: QueryBenchResult): Figure[] {
  const group = `service query, hybrid retrieval (${r.queries} queries, one thread)`;
  return r.sizes.flatMap((s) => {
    const label = `${s.chunks / 1000}k chunks`;
    const p95: Figure = {
      group,
      name: `query p95 at ${label}`,
      value: s.hybridP95Ms,
      unit: 'ms',
      reference: { name: 'BM25 alone, same queries', value: s.bm25P95Ms },
      ratio: s.bm25P95Ms === 0 ? null : Math.round((s.hybridP95Ms / s.bm25P95Ms) * 100) / 100,
      target: s.chunks === 100_000 ? `< ${MAX_QUERY_P95_MS_AT_100K} ms` : null,
      pass: s.chunks === 100_000 ? s.hybridP95Ms < MAX_QUERY_P95_MS_AT_100K : null,
    };
    return [
      info(group, `query p50 at ${label}`, s.hybridP50Ms, 'ms', undefined, { name: 'BM25 alone, same queries', value: s.bm25P50Ms }),
      p95,
      info(group, `query p95 at ${label}, every vector scanned (as with a provider)`, s.scanP95Ms, 'ms', `p50 ${s.scanP50Ms} ms`),
      info(group, `first query after a write at ${label} (loads the vector table, ${s.vectorTableMb} MiB)`, s.firstQueryMs, 'ms'),
    ];
  });
}
