import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { insertDataset } from '../src/service/store/datasets.js';
import { startCheckpointer } from '../src/service/store/checkpointer.js';
import { openServiceDb } from '../src/service/store/db.js';
import { insertFile } from '../src/service/store/files.js';
import { timeIngest } from './ingest-run.js';

/**
 * Processing-worker benchmark: generated files of each kind go through the real worker into a real
 * service database (the service's migrations and pragmas), timed, while `monitorEventLoopDelay`
 * records the longest stretch the worker kept the event loop from other work (requests).
 *
 * The machine may be loaded, so every figure stands beside a baseline measured in the same run on
 * the same file: `readFileSync` + `split('\n')`, the least work any line-based reader does.
 * Throughput is in MiB/s of file.
 */

export type IngestBenchResult = { name: string; mbPerSec: number; maxLoopDelayMs: number; baselineMbPerSec: number };

export type IngestCase = 'txt-prose' | 'txt-lines' | 'md-doc' | 'md-blank-lines' | 'txt-whitespace' | 'csv';

export type IngestBenchOptions = {
  /** Size of each generated file. @default 20 */
  sizeMiB?: number;
  /** @default all */
  cases?: readonly IngestCase[];
  /** Where files and databases are created. @default os.tmpdir() */
  dir?: string;
};

/** Plain text and Markdown must process at least this fast. */
export const MIN_TEXT_MB_PER_SEC = 10;
/** No synchronous stretch of the worker may block the event loop longer than this. */
export const MAX_LOOP_DELAY_MS = 100;

const MIB = 1024 * 1024;
const WORDS =
  'the quick brown fox jumps over a lazy dog while the river tide turns under moon and harbor lantern light copper meadow signal archive'.split(
    ' ',
  );

type Generator = { fileName: string; line: (i: number, word: () => string) => string };

function sentence(word: () => string): string {
  const n = 6 + (word().length % 9);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(word());
  return `${words.join(' ')}.`;
}

const GENERATORS: Record<IngestCase, Generator> = {
  'txt-prose': { fileName: 'prose.txt', line: (i, w) => (i % 5 === 4 ? '\n' : `${sentence(w)} ${sentence(w)}\n`) },
  // One long paragraph: no blank line in the whole file.
  'txt-lines': { fileName: 'lines.txt', line: (_i, w) => `${sentence(w)} ${sentence(w)}\n` },
  'md-doc': {
    fileName: 'doc.md',
    line: (i, w) => {
      if (i % 60 === 0) return `\n## Section ${i / 60}\n\n`;
      if (i % 60 === 30) return '\n```sh\nnpm run build # not a heading\n```\n\n';
      if (i % 7 === 3) return `- ${sentence(w)}\n`;
      return i % 5 === 4 ? '\n' : `${sentence(w)} ${sentence(w)}\n`;
    },
  },
  'md-blank-lines': { fileName: 'blank.md', line: () => '\n'.repeat(4096) },
  'txt-whitespace': { fileName: 'space.txt', line: (i) => (i % 3 === 0 ? '   \t  \n' : i % 3 === 1 ? '\r\n' : `${' '.repeat(120)}\r\n`) },
  csv: {
    fileName: 'data.csv',
    line: (i, w) =>
      i === 0 ? 'id,name,email,city,notes\n' : `${i},Person ${i},person${i}@example.com,City ${i % 997},"${sentence(w)}, ${w()}"\n`,
  },
};

async function writeFile(path: string, bytes: number, g: Generator): Promise<number> {
  let seed = 42;
  const word = (): string => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return WORDS[seed % WORDS.length] as string;
  };
  const out = createWriteStream(path);
  let written = 0;
  for (let i = 0; written < bytes; i++) {
    const line = g.line(i, word);
    written += Buffer.byteLength(line);
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return statSync(path).size;
}

function baselineMbPerSec(path: string, size: number): number {
  const started = performance.now();
  const lines = readFileSync(path, 'utf8').split('\n');
  const seconds = (performance.now() - started) / 1000;
  if (lines.length === 0) throw new Error('unreachable');
  return size / MIB / seconds;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

async function runCase(name: IngestCase, sizeMiB: number, base: string): Promise<IngestBenchResult> {
  const dir = mkdtempSync(join(base, 'kbsync-bench-ingest-'));
  const db = openServiceDb(join(dir, 'service.db'));
  // As the service runs it (server.ts): WAL checkpoints in a worker thread, not in the worker's commits.
  const checkpointer = startCheckpointer(db);
  try {
    const g = GENERATORS[name];
    const path = join(dir, g.fileName);
    const size = await writeFile(path, sizeMiB * MIB, g);
    const now = new Date().toISOString();
    const datasetId = insertDataset(db, { name: 'bench', plan: 'pro', credits: 0, createdAt: now });
    const file = insertFile(db, { datasetId, name: g.fileName, size, sha256: 'bench', storedPath: path, now });

    const run = await timeIngest(db);
    await run.stop();
    // After, not before: the baseline's garbage (an array of every line) must not be collected in the timed run.
    const baseline = baselineMbPerSec(path, size);

    const row = db.prepare('SELECT status, error, chunk_count AS chunks FROM files WHERE id = ?').get(file.id) as
      { status: string; error: string | null; chunks: number | null } | undefined;
    const expectChunks = name !== 'md-blank-lines' && name !== 'txt-whitespace';
    if (row?.status !== 'processed' || (expectChunks ? (row.chunks ?? 0) === 0 : row.chunks !== 0)) {
      throw new Error(`${name}: file not processed as expected: ${JSON.stringify(row)}`);
    }
    return {
      name: `${name} ${round1(size / MIB)} MiB`,
      mbPerSec: round1(size / MIB / run.seconds),
      maxLoopDelayMs: round1(run.maxLoopDelayMs),
      baselineMbPerSec: round1(baseline),
    };
  } finally {
    await checkpointer.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Processes one generated file per case through the worker; one result per case, in order. */
export async function runIngestBench(options: IngestBenchOptions = {}): Promise<IngestBenchResult[]> {
  const sizeMiB = options.sizeMiB ?? 20;
  const cases = options.cases ?? (Object.keys(GENERATORS) as IngestCase[]);
  const results: IngestBenchResult[] = [];
  for (const name of cases) results.push(await runCase(name, sizeMiB, options.dir ?? tmpdir()));
  return results;
}

/** True when the result meets the targets: text and Markdown at MIN_TEXT_MB_PER_SEC, every case under MAX_LOOP_DELAY_MS. */
export function meetsTargets(r: IngestBenchResult): boolean {
  const isText = /^(txt|md)-/.test(r.name);
  return r.maxLoopDelayMs <= MAX_LOOP_DELAY_MS && (!isText || r.mbPerSec >= MIN_TEXT_MB_PER_SEC);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = await runIngestBench();
  for (const r of results) {
    const ok = meetsTargets(r);
    console.log(
      `${r.name.padEnd(26)} ${String(r.mbPerSec).padStart(6)} MiB/s (baseline ${r.baselineMbPerSec} MiB/s)  max event-loop delay ${r.maxLoopDelayMs} ms  ${ok ? 'OK' : 'FAIL'}`,
    );
  }
  process.exitCode = results.every(meetsTargets) ? 0 : 1;
}
