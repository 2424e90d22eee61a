import { info, type Figure } from './figure.js';
import { ratio } from './measure.js';
import { CSV_RSS_LIMIT_MB, type CsvRssResult, type FormatIngestResult } from './ingest-formats.js';

/** Issue 17: ingest throughput of every format beside a bare read of the same bytes (diagnostic: no target per format). */
export function formatIngestFigures(results: readonly FormatIngestResult[]): Figure[] {
  const group = 'service ingest per format (bench/ingest-formats.ts)';
  return results.map((r) =>
    info(
      group,
      `processing .${r.format}, ${r.fileMib} MiB file (${r.format === 'xls' ? 'a full sheet, 65,535 rows' : `${r.contentMib} MiB of content`})`,
      r.mbPerSec,
      'MiB/s',
      `${r.chunks} chunks; longest event-loop block ${r.maxLoopDelayMs} ms`,
      { name: 'readFileSync of the same file', value: r.bareReadMbPerSec },
    ),
  );
}

/** Issue 17: peak RSS while the worker ingests a 200 MB CSV. */
export function csvRssFigures(r: CsvRssResult): Figure[] {
  const group = 'service ingest per format (bench/ingest-formats.ts)';
  return [
    {
      group,
      name: `peak RSS while ingesting a ${r.fileMib} MiB CSV`,
      value: r.peakRssMb,
      unit: 'MB',
      reference: { name: 'the same process just before', value: r.baselineRssMb },
      ratio: ratio(r.peakRssMb, r.baselineRssMb),
      target: `< ${CSV_RSS_LIMIT_MB} MB`,
      pass: r.peakRssMb < CSV_RSS_LIMIT_MB,
      note: `${r.chunks} chunks in ${r.seconds} s; JavaScript heap peak ${r.peakHeapMb} MB`,
    },
  ];
}
