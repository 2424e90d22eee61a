import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { convertPdf } from '../src/convert/pdf.js';
import { DEFAULT_CONVERT_LIMITS } from '../src/convert/types.js';
import { hasCommand, median, round1, timeProcess } from './measure.js';
import { repoRoot } from './paths.js';
import { manyPagePdf } from './pdf-files.js';

/**
 * PDF conversion (src/convert/pdf.ts): pages per second of convertPdf beside `pdftotext`
 * (poppler-utils) on the same files in the same run, alternated file by file, and the peak RSS of
 * converting a 500-page PDF. The files: the PDF fixtures made by LibreOffice, Chromium and pdfTeX
 * (test/fixtures/convert/), and a 500-page PDF written by bench/pdf-files.ts. pdftotext's time is
 * its whole process (it starts once a file); convertPdf's is the call, pdf.js already loaded (a
 * conversion worker loads it once and converts many files).
 */

export type PdfSpeedFile = { name: string; pages: number; ms: number; pdftotextMs: number | null };
export type PdfSpeedResult = {
  files: PdfSpeedFile[];
  pages: number;
  pagesPerSec: number;
  /** null: pdftotext is not installed here (Debian: `apt-get install -y poppler-utils`). */
  pdftotextPagesPerSec: number | null;
  runs: number;
};
export type PdfRssResult = {
  pages: number;
  seconds: number;
  peakRssMb: number;
  baselineRssMb: number;
  peakHeapMb: number;
  markdownMb: number;
};

/** Target: peak RSS while a 500-page PDF is converted. */
export const PDF_RSS_LIMIT_MB = 200;

const FIXTURES = ['report-libreoffice.pdf', 'handbook-chromium.pdf', 'notes-pdftex.pdf'];
const MB = 1e6;

async function convertOnce(bytes: Uint8Array, name: string): Promise<{ ms: number; pages: number; chars: number }> {
  const t0 = performance.now();
  const r = await convertPdf(bytes, { name, limits: DEFAULT_CONVERT_LIMITS });
  const ms = performance.now() - t0;
  if (!r.ok) throw new Error(`${name}: ${r.skip}: ${r.reason}`);
  return { ms, pages: r.units, chars: r.markdown.length };
}

function pdftotextMs(path: string): number {
  const run = timeProcess('pdftotext', ['-q', path, '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (run.status !== 0) throw new Error(`pdftotext ${path}: exit ${run.status}: ${run.stderr}`);
  return run.ms;
}

/** Each file converted `runs` times (default 5) by convertPdf and by pdftotext, alternated; medians per file. */
export async function runPdfConvertBench(o: { runs?: number; pages?: number; log?: (line: string) => void } = {}): Promise<PdfSpeedResult> {
  const runs = o.runs ?? 5;
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-bench-pdf-'));
  try {
    const paths = FIXTURES.map((f) => join(repoRoot(), 'test', 'fixtures', 'convert', f));
    const long = join(dir, `generated-${o.pages ?? 500}-pages.pdf`);
    writeFileSync(long, manyPagePdf(o.pages ?? 500));
    paths.push(long);
    const withPdftotext = hasCommand('pdftotext');
    // pdf.js loads at the first conversion: once, before the timed runs.
    await convertOnce(new Uint8Array(readFileSync(paths[0] as string)), 'warm-up.pdf');
    const files: PdfSpeedFile[] = [];
    for (const path of paths) {
      const bytes = new Uint8Array(readFileSync(path));
      const name = path.slice(path.lastIndexOf('/') + 1);
      const ours: number[] = [];
      const theirs: number[] = [];
      let pages = 0;
      for (let i = 0; i < runs; i++) {
        const run = await convertOnce(bytes, name);
        ours.push(run.ms);
        pages = run.pages;
        if (withPdftotext) theirs.push(pdftotextMs(path));
      }
      const file = { name, pages, ms: median(ours) as number, pdftotextMs: withPdftotext ? (median(theirs) as number) : null };
      o.log?.(`${name}: ${pages} pages, convertPdf ${file.ms} ms, pdftotext ${file.pdftotextMs ?? 'not installed'} ms`);
      files.push(file);
    }
    const pages = files.reduce((n, f) => n + f.pages, 0);
    const ms = files.reduce((n, f) => n + f.ms, 0);
    const refMs = withPdftotext ? files.reduce((n, f) => n + (f.pdftotextMs ?? 0), 0) : null;
    return {
      files,
      pages,
      pagesPerSec: round1(pages / (ms / 1000)),
      pdftotextPagesPerSec: refMs === null ? null : round1(pages / (refMs / 1000)),
      runs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Peak RSS of this (fresh) process while it converts a PDF of `pages` pages (default 500), beside its RSS just before. */
export async function runPdfRssBench(o: { pages?: number; log?: (line: string) => void } = {}): Promise<PdfRssResult> {
  const pages = o.pages ?? 500;
  const bytes = new Uint8Array(manyPagePdf(pages));
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  let peakHeap = process.memoryUsage().heapUsed;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  try {
    const run = await convertOnce(bytes, `generated-${pages}-pages.pdf`);
    // The sampler can miss a short spike between ticks; the kernel's high-water mark cannot.
    peak = Math.max(peak, process.memoryUsage.rss(), process.resourceUsage().maxRSS * 1024);
    if (run.pages !== pages) throw new Error(`converted ${run.pages} pages of ${pages}`);
    const result = {
      pages,
      seconds: round1(run.ms / 1000),
      peakRssMb: round1(peak / MB),
      baselineRssMb: round1(baseline / MB),
      peakHeapMb: round1(peakHeap / MB),
      markdownMb: round1(run.chars / MB),
    };
    o.log?.(`${pages} pages in ${result.seconds} s: peak RSS ${result.peakRssMb} MB (before: ${result.baselineRssMb} MB)`);
    return result;
  } finally {
    clearInterval(sampler);
  }
}

// `node .bench-build/bench/pdf-convert.js`: both figures without the rest of `npm run bench` (the RSS in a fresh process).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const log = (line: string): void => console.log(`  ${line}`);
  const speed = await runPdfConvertBench({ log });
  console.log(`convertPdf ${speed.pagesPerSec} pages/s; pdftotext ${speed.pdftotextPagesPerSec ?? 'not installed'} pages/s`);
  const child = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('./child.js', import.meta.url)), './pdf-convert.js', 'runPdfRssBench', '{}'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    },
  );
  if (child.status !== 0) throw new Error(`the RSS benchmark's process failed (exit ${child.status})`);
  const rss = JSON.parse(child.stdout) as PdfRssResult;
  const ok = rss.peakRssMb < PDF_RSS_LIMIT_MB;
  console.log(`${rss.pages}-page PDF: peak RSS ${rss.peakRssMb} MB (limit ${PDF_RSS_LIMIT_MB}) ${ok ? 'OK' : 'FAIL'}`);
  process.exitCode = ok ? 0 : 1;
}
