import { info, type Figure } from './figure.js';
import { ratio } from './measure.js';
import type { PlanBenchFigure } from './plan.js';
import type { ScanBenchFigure, ScanBenchResult } from './scan.js';
import { RSS_LIMIT_MB, type UploadMemoryResult } from './upload-memory.js';

/** A 1 GB upload to a local server stays under RSS_LIMIT_MB. */
export function uploadFigures(r: UploadMemoryResult): Figure[] {
  const group = 'upload memory';
  const peak: Figure = {
    group,
    name: `peak RSS while uploading a ${Math.round(r.bytes / 2 ** 20)} MiB file to a local HTTP server`,
    value: r.peakRssMb,
    unit: 'MB',
    reference: { name: 'the same process just before the upload', value: r.baselineRssMb },
    ratio: ratio(r.peakRssMb, r.baselineRssMb),
    target: `< ${RSS_LIMIT_MB} MB`,
    pass: r.peakRssMb < RSS_LIMIT_MB,
    note: 'the client alone: the server drains the body in a process of its own (bench/upload-memory.ts)',
  };
  return [peak, info(group, 'upload throughput', r.mbPerSec, 'MiB/s')];
}

/** The sources in one process: diagnostics behind the CLI figures. */
export function scanFigures(r: ScanBenchResult): Figure[] {
  const group = `sources in process (${r.tree.candidates} candidates, ${Math.round(r.tree.candidateBytes / 1e6)} MB; diagnostics)`;
  const ref = (f: ScanBenchFigure) => ({ name: f.name, value: f.medianMs });
  const row = (f: ScanBenchFigure, reference: ScanBenchFigure) =>
    info(group, f.name, f.medianMs, 'ms', [f.note, `runs: ${f.runsMs.join(', ')} ms`].filter(Boolean).join('; '), ref(reference));
  return [row(r.walk, r.bareWalk), row(r.unchanged, r.bareWalk), row(r.changed, r.bareWalk), row(r.coldHash, r.sha256sum)];
}

/** The planner alone on synthetic input. */
export function planFigures(list: readonly PlanBenchFigure[]): Figure[] {
  const group = 'planner alone, synthetic input (diagnostics; CPU time)';
  const reference = list[0];
  return list
    .slice(1)
    .map((f) =>
      info(
        group,
        `${f.name} (${f.files} files)`,
        f.cpuMedianMs,
        'ms',
        `wall median ${f.medianMs} ms, best ${f.minMs} ms`,
        reference === undefined ? null : { name: reference.name, value: reference.cpuMedianMs },
      ),
    );
}

/** A result of bench/ingest.ts (owned by the ingest engineers; read defensively). */
export type IngestLike = { name: string; mbPerSec: number; maxLoopDelayMs: number; baselineMbPerSec: number };

/** The service's processing worker, judged by the ingest module's own `meetsTargets` when it exports one. */
export function ingestFigures(results: readonly IngestLike[], meets: ((r: IngestLike) => boolean) | null, target: string | null): Figure[] {
  const group = 'service ingest (bench/ingest.ts)';
  return results.map((r) => ({
    group,
    name: `processing ${r.name}`,
    value: r.mbPerSec,
    unit: 'MiB/s',
    reference: { name: 'readFileSync + split lines of the same file', value: r.baselineMbPerSec },
    ratio: ratio(r.mbPerSec, r.baselineMbPerSec),
    target: meets === null ? null : target,
    pass: meets === null ? null : meets(r),
    note: `longest event-loop block ${r.maxLoopDelayMs} ms`,
  }));
}
