import type { ConvertSyncResult } from './convert-sync.js';
import type { Figure } from './figure.js';
import { ratio } from './measure.js';

const GROUP = 'Conversions in the pipeline (bench/convert-sync.ts)';

/** A cold conversion keeps at least this share of the cores busy (CPU time / wall time / cores). */
export const COLD_CORE_SHARE = 0.75;
/** An unchanged folder of converted documents plans within this factor of as many Markdown files. */
export const UNCHANGED_FACTOR = 1.2;

/** Rows of docs/benchmarks.md for bench/convert-sync.ts. */
export function convertSyncFigures(r: ConvertSyncResult | null): Figure[] {
  const cold = r?.cold ?? null;
  const unchanged = r?.unchanged ?? null;
  const share = cold === null || r === null ? null : Math.round((cold.cpuMs / cold.wallMs / r.cores) * 100) / 100;
  const problems = r === null ? 'the benchmark process failed' : r.problems.join('; ');
  return [
    {
      group: GROUP,
      name: `cold plan of ${cold?.documents ?? 200} PDFs (${cold?.pages ?? 2000} pages): share of the ${r?.cores ?? '?'} cores busy`,
      value: share,
      unit: 'of the cores',
      reference: { name: 'CPU time of the process and its threads, ms', value: cold?.cpuMs ?? null },
      ratio: null,
      target: `≥ ${COLD_CORE_SHARE}`,
      pass: share === null ? false : share >= COLD_CORE_SHARE,
      note: cold === null ? `not measured: ${problems}` : `wall ${cold.wallMs} ms, CPU ${cold.cpuMs} ms`,
    },
    {
      group: GROUP,
      name: `plan of ${unchanged?.files ?? 10_000} unchanged converted documents (RTF), median`,
      value: unchanged?.convertedMs ?? null,
      unit: 'ms',
      reference: { name: `plan of as many unchanged Markdown files, same run`, value: unchanged?.markdownMs ?? null },
      ratio: ratio(unchanged?.convertedMs ?? null, unchanged?.markdownMs ?? null),
      target: `≤ ${UNCHANGED_FACTOR}× the Markdown plan`,
      pass: unchanged === null ? false : unchanged.convertedMs <= UNCHANGED_FACTOR * unchanged.markdownMs,
      note:
        unchanged === null
          ? `not measured: ${problems}`
          : `${unchanged.runs} interleaved runs each: ${unchanged.convertedRunsMs.join(', ')} against ${unchanged.markdownRunsMs.join(', ')} ms`,
    },
  ];
}
