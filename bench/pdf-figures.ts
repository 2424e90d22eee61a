import { info, type Figure } from './figure.js';
import { ratio } from './measure.js';
import { PDF_RSS_LIMIT_MB, type PdfRssResult, type PdfSpeedResult } from './pdf-convert.js';

const GROUP = 'PDF conversion (bench/pdf-convert.ts)';

/** Rows of docs/benchmarks.md for bench/pdf-convert.ts: pages per second beside pdftotext (no target), peak RSS (target). */
export function pdfFigures(speed: PdfSpeedResult | null, rss: PdfRssResult | null): Figure[] {
  const rows: Figure[] = [];
  if (speed !== null) {
    const files = speed.files.map((f) => `${f.name} ${f.pages} p. ${f.ms} ms (pdftotext ${f.pdftotextMs ?? '-'} ms)`).join('; ');
    rows.push(
      info(
        GROUP,
        `convertPdf, pages per second over ${speed.pages} pages in ${speed.files.length} files`,
        speed.pagesPerSec,
        'pages/s',
        `median of ${speed.runs} runs a file: ${files}${speed.pdftotextPagesPerSec === null ? '; pdftotext not installed (apt-get install -y poppler-utils)' : ''}`,
        { name: 'pdftotext (poppler-utils), whole process, same files', value: speed.pdftotextPagesPerSec },
      ),
    );
  }
  rows.push({
    group: GROUP,
    name: `peak RSS while converting a ${rss?.pages ?? 500}-page PDF`,
    value: rss?.peakRssMb ?? null,
    unit: 'MB',
    reference: { name: 'the same process just before', value: rss?.baselineRssMb ?? null },
    ratio: rss === null ? null : ratio(rss.peakRssMb, rss.baselineRssMb),
    target: `< ${PDF_RSS_LIMIT_MB} MB`,
    pass: rss === null ? false : rss.peakRssMb < PDF_RSS_LIMIT_MB,
    ...(rss === null
      ? { note: 'not measured: the benchmark process failed' }
      : { note: `${rss.seconds} s; JavaScript heap peak ${rss.peakHeapMb} MB; ${rss.markdownMb} MB of Markdown` }),
  });
  return rows;
}
