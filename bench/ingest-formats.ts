import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { keepHeapSmall } from '../src/service/memory.js';
import { startCheckpointer } from '../src/service/store/checkpointer.js';
import { insertDataset } from '../src/service/store/datasets.js';
import { openServiceDb } from '../src/service/store/db.js';
import { insertFile } from '../src/service/store/files.js';
import { timeIngest } from './ingest-run.js';
import { FORMATS, writeFormatFile, type Format } from './format-files.js';

/**
 * Ingest throughput of each of the twelve formats (bench/format-files.ts) through the real
 * processing worker into a real service database, beside a bare read (`readFileSync`) of the same
 * file's bytes in the same run; and the peak RSS of the process while it ingests a 200 MiB CSV.
 * Throughput is MiB of file per second: a zipped or binary format (DOCX, XLSX, XLS, Parquet) packs
 * the same content in fewer bytes, so its figure is lower for the same work.
 */
export type FormatIngestResult = {
  format: Format;
  fileMib: number;
  /** What the file holds, before any zip or binary encoding (the size asked of the generator). */
  contentMib: number;
  mbPerSec: number;
  bareReadMbPerSec: number;
  chunks: number;
  maxLoopDelayMs: number;
};

export type CsvRssResult = {
  fileMib: number;
  seconds: number;
  chunks: number;
  peakRssMb: number;
  baselineRssMb: number;
  /** The JavaScript heap's peak in the same run (the rest of RSS is SQLite, threads and native buffers). */
  peakHeapMb: number;
};

/** Target: peak RSS while a 200 MB CSV is ingested. */
export const CSV_RSS_LIMIT_MB = 250;

const MIB = 1024 * 1024;
const round1 = (n: number): number => Math.round(n * 10) / 10;
const round2 = (n: number): number => Math.round(n * 100) / 100;

type Run = { seconds: number; chunks: number; maxLoopDelayMs: number; peakRssMb: number; peakHeapMb: number };

/** Processes the file at `path` (named `name`) through a fresh worker and database in `dir`; times it and samples RSS. */
async function ingest(dir: string, path: string, name: string): Promise<Run> {
  // As `kbsync serve` does at start: the figures are the service's.
  keepHeapSmall();
  const db = openServiceDb(join(dir, 'service.db'));
  const checkpointer = startCheckpointer(db);
  try {
    const now = new Date().toISOString();
    const datasetId = insertDataset(db, { name: 'bench', plan: 'pro', credits: 0, createdAt: now });
    const file = insertFile(db, { datasetId, name, size: statSync(path).size, sha256: 'bench', storedPath: path, now });
    let peak = process.memoryUsage.rss();
    let peakHeap = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
      peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    }, 20);
    const run = await timeIngest(db);
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    await run.stop();
    const row = db.prepare('SELECT status, error, chunk_count AS chunks FROM files WHERE id = ?').get(file.id) as
      { status: string; error: string | null; chunks: number | null } | undefined;
    if (row?.status !== 'processed' || (row.chunks ?? 0) === 0)
      throw new Error(`${name}: not processed as expected: ${JSON.stringify(row)}`);
    return {
      seconds: run.seconds,
      chunks: row.chunks ?? 0,
      maxLoopDelayMs: run.maxLoopDelayMs,
      peakRssMb: peak / 1e6,
      peakHeapMb: peakHeap / 1e6,
    };
  } finally {
    await checkpointer.stop();
    db.close();
  }
}

/** One generated file per format, about `sizeMiB` of content each (default 6: under every whole-file and zip limit, e.g. 8 MiB for a DOCX part). */
export async function runFormatIngestBench(
  o: { sizeMiB?: number; formats?: readonly Format[]; log?: (line: string) => void } = {},
): Promise<FormatIngestResult[]> {
  const sizeMiB = o.sizeMiB ?? 6;
  const results: FormatIngestResult[] = [];
  for (const format of o.formats ?? FORMATS) {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-bench-format-'));
    try {
      const path = join(dir, `bench.${format}`);
      await writeFormatFile(path, format, sizeMiB * MIB);
      const size = statSync(path).size;
      const run = await ingest(dir, path, `bench.${format}`);
      // After, so that the read's buffer is not collected during the timed run.
      const readStarted = performance.now();
      if (readFileSync(path).length !== size) throw new Error('unreachable');
      const readSeconds = (performance.now() - readStarted) / 1000;
      const result = {
        format,
        fileMib: round2(size / MIB),
        contentMib: sizeMiB,
        mbPerSec: round2(size / MIB / run.seconds),
        bareReadMbPerSec: round1(size / MIB / readSeconds),
        chunks: run.chunks,
        maxLoopDelayMs: round1(run.maxLoopDelayMs),
      };
      o.log?.(
        `${format}: ${result.fileMib} MiB at ${result.mbPerSec} MiB/s (bare read ${result.bareReadMbPerSec} MiB/s), ${run.chunks} chunks`,
      );
      results.push(result);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}

/** Peak RSS of this process while a `sizeMiB` CSV (default 200) is ingested, beside its RSS just before. */
export async function runCsvRssBench(o: { sizeMiB?: number; log?: (line: string) => void } = {}): Promise<CsvRssResult> {
  const sizeMiB = o.sizeMiB ?? 200;
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-bench-csv-rss-'));
  try {
    const path = join(dir, 'big.csv');
    // Written by another process, so that this one's RSS holds none of the writing.
    const child = spawnSync(
      process.execPath,
      [
        fileURLToPath(new URL('./child.js', import.meta.url)),
        './format-files.js',
        'writeFormatFile',
        JSON.stringify(path),
        '"csv"',
        String(sizeMiB * MIB),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (child.status !== 0) throw new Error(`writing the CSV failed (exit ${child.status})`);
    const baselineRssMb = process.memoryUsage.rss() / 1e6;
    const run = await ingest(dir, path, 'big.csv');
    o.log?.(`${sizeMiB} MiB CSV: ${run.chunks} chunks in ${round1(run.seconds)} s, peak RSS ${round1(run.peakRssMb)} MB`);
    return {
      fileMib: round1(statSync(path).size / MIB),
      seconds: round1(run.seconds),
      chunks: run.chunks,
      peakRssMb: round1(run.peakRssMb),
      baselineRssMb: round1(baselineRssMb),
      peakHeapMb: round1(run.peakHeapMb),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
