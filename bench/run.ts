/**
 * `npm run bench`: every benchmark, each in a fresh compiled process (bench/child.ts), then
 * docs/benchmarks.md with each figure, its same-run reference, ratio, target and PASS/FAIL.
 * Exits 1 when a target is missed (or could not be measured).
 *
 * Knobs: KBSYNC_BENCH_FILES (default 100000); KBSYNC_BENCH_SMALL=1 (files of 1–4 KB each instead
 * of realistic sizes, ~2.4 GB per 100k files: quicker to generate, harder on the cold
 * scan); KBSYNC_BENCH_RUNS (timed runs per CLI figure, default 11: single runs here vary by ±15%).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { cliFigures } from './cli-figures.js';
import type { CliSpeedResult } from './cli-speed.js';
import type { DaemonPlanResult } from './daemon-plan.js';
import { daemonPlanFigures } from './daemon-plan-figures.js';
import type { Figure } from './figure.js';
import { currentLoad, machineFacts } from './machine.js';
import { ingestFigures, planFigures, scanFigures, uploadFigures, type IngestLike } from './other-figures.js';
import { repoRoot } from './paths.js';
import type { PlanBenchFigure } from './plan.js';
import type { PgStateBenchResult } from './pg-state.js';
import { pgStateFigures } from './pg-state-figures.js';
import { queryFigures } from './query-figures.js';
import type { QueryBenchResult } from './query.js';
import { csvRssFigures, formatIngestFigures } from './format-figures.js';
import type { CsvRssResult, FormatIngestResult } from './ingest-formats.js';
import type { PdfRssResult, PdfSpeedResult } from './pdf-convert.js';
import { pdfFigures } from './pdf-figures.js';
import type { ConvertSyncResult } from './convert-sync.js';
import { convertSyncFigures } from './convert-sync-figures.js';
import type { ConvertOfficeResult } from './convert-office.js';
import { convertOfficeFigures } from './convert-office-figures.js';
import { figureLine, renderReport } from './report.js';
import { runScaleTier } from './scale.js';
import { scaleSectionOf } from './scale-report.js';
import type { ScanBenchResult } from './scan.js';
import { serviceStartFigures } from './service-start-figures.js';
import type { StatusPageBenchResult } from './status-page.js';
import { statusPageFigures } from './status-page-figures.js';
import { hostileFigures } from './hostile-figures.js';
import type { HostileIngestResult } from './hostile-ingest.js';
import type { ServiceStartResult } from './service-start.js';
import type { UploadMemoryResult } from './upload-memory.js';
import type { WatchDaemonResult } from './watch-daemon.js';
import { watchFigures } from './watch-figures.js';
import type { WatchBenchResult } from './watch.js';

// `npm run bench -- --scale[=groups]`: the scale tier alone (bench/scale.ts), never part of the normal run.
const scaleArg = process.argv.slice(2).find((a) => a === '--scale' || a.startsWith('--scale='));
if (scaleArg !== undefined) process.exit(await runScaleTier(scaleArg));

const started = performance.now();
const machine = machineFacts();
const files = Number(process.env.KBSYNC_BENCH_FILES ?? 100_000);
const full = process.env.KBSYNC_BENCH_SMALL !== '1';
const runs = Number(process.env.KBSYNC_BENCH_RUNS ?? 11);
const notes: string[] = [];
const figures: Figure[] = [];

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

/** Runs `fn` of `module` in a fresh process (child.js); its JSON result, or null (and a note) when it failed. */
function inChild<T>(label: string, module: string, fn: string, ...args: unknown[]): T | null {
  console.log(`\n== ${label}`);
  const res = spawnSync(process.execPath, [here('./child.js'), module, fn, ...args.map((a) => JSON.stringify(a))], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (res.status !== 0) {
    notes.push(`${label}: the benchmark process failed (exit ${res.status}); its figures are missing.`);
    return null;
  }
  return JSON.parse(res.stdout) as T;
}

function add(list: Figure[]): void {
  for (const f of list) console.log(`  ${figureLine(f)}`);
  figures.push(...list);
}

// First, while the machine is quiet: starts of the local service (no tree needed).
const serviceStart = inChild<ServiceStartResult>('local service start (fresh processes)', './service-start.js', 'runServiceStartBench', {
  runs,
});
if (serviceStart !== null) add(serviceStartFigures(serviceStart));

const cli = inChild<CliSpeedResult>('kbsync plan, real CLI (fresh processes)', './cli-speed.js', 'runCliSpeedBench', { files, full, runs });
if (cli !== null) add(cliFigures(cli));
else
  figures.push({
    group: 'kbsync plan, real CLI, fresh process',
    name: 'end-to-end figures',
    value: null,
    unit: 'ms',
    reference: null,
    ratio: null,
    target: 'measured',
    pass: false,
  });

// kbsync plan beside a running kbsync watch: answered by the daemon, beside the fresh walk and the empty folder.
add(
  daemonPlanFigures(
    inChild<DaemonPlanResult>('kbsync plan beside kbsync watch', './daemon-plan.js', 'runDaemonPlanBench', { files, full, runs }),
  ),
);

// The status page of kbsync watch --http: its first GET / at 10,000 tracked files, on the daemon's side.
add(
  statusPageFigures(inChild<StatusPageBenchResult>('status page first paint', './status-page.js', 'runStatusPageBench', { files: 10_000 })),
);

const upload = inChild<UploadMemoryResult>('upload memory (1 GiB)', './upload-memory.js', 'runUploadMemoryBench');
if (upload !== null) add(uploadFigures(upload));

const scan = inChild<ScanBenchResult>('sources in process', './scan.js', 'runScanBench', { files, full, runs: 2 });
if (scan !== null) add(scanFigures(scan));

// kbsync watch at 100k files, and each watcher backend alone (the measurement behind watch.watcher's default).
const watchDaemon = inChild<WatchDaemonResult>('kbsync watch (daemon)', './watch-daemon.js', 'runWatchDaemonBench', { files, full });
const backends = (['node', 'parcel', 'chokidar'] as const).map((backend) =>
  inChild<WatchBenchResult>(`watcher backend alone: ${backend}`, './watch.js', 'runWatchBench', { files, full, backend }),
);
add(watchFigures(watchDaemon, backends));
if (watchDaemon === null)
  figures.push({
    group: 'kbsync watch',
    name: 'daemon figures',
    value: null,
    unit: 'ms',
    reference: null,
    ratio: null,
    target: 'measured',
    pass: false,
  });

const plan = inChild<PlanBenchFigure[]>('planner alone', './plan.js', 'runPlanBench', files, 5);
if (plan !== null) add(planFigures(plan));

// The PostgreSQL state: an unchanged plan beside the SQLite state's, and reservations/s with 8 processes.
add(pgStateFigures(inChild<PgStateBenchResult>('PostgreSQL state', './pg-state.js', 'runPgStateBench', { files })));

const query = inChild<QueryBenchResult>('service query latency (hybrid retrieval)', './query.js', 'runQueryBench', {});
if (query !== null) add(queryFigures(query));

// bench/ingest.ts belongs to the ingest engineers: included when present, judged by its own meetsTargets.
if (existsSync(here('./ingest.js'))) {
  const ingest = inChild<IngestLike[]>('service ingest', './ingest.js', 'runIngestBench', {});
  if (ingest !== null) {
    const mod = (await import(new URL('./ingest.js', import.meta.url).href)) as Record<string, unknown>;
    const meets = typeof mod.meetsTargets === 'function' ? (mod.meetsTargets as (r: IngestLike) => boolean) : null;
    const target =
      typeof mod.MIN_TEXT_MB_PER_SEC === 'number' && typeof mod.MAX_LOOP_DELAY_MS === 'number'
        ? `text and Markdown ≥ ${mod.MIN_TEXT_MB_PER_SEC} MiB/s; event loop never blocked > ${mod.MAX_LOOP_DELAY_MS} ms`
        : 'meetsTargets() of bench/ingest.ts';
    add(ingestFigures(ingest, meets, target));
  }
} else {
  notes.push('bench/ingest.ts is not present in this checkout: no ingest figures.');
}

const formats = inChild<FormatIngestResult[]>(
  'service ingest, each of the twelve formats',
  './ingest-formats.js',
  'runFormatIngestBench',
  {},
);
if (formats !== null) add(formatIngestFigures(formats));
const hostile = inChild<HostileIngestResult>(
  'service while it parses the worst input of each type',
  './hostile-ingest.js',
  'runHostileIngestBench',
  {},
);
if (hostile !== null) add(hostileFigures(hostile));
const csvRss = inChild<CsvRssResult>('service ingest, peak RSS of a 200 MiB CSV', './ingest-formats.js', 'runCsvRssBench', {});
if (csvRss !== null) add(csvRssFigures(csvRss));

// PDF conversion: pages per second beside pdftotext on the same files; peak RSS of a 500-page PDF, in a process of its own.
add(
  pdfFigures(
    inChild<PdfSpeedResult>('PDF conversion beside pdftotext', './pdf-convert.js', 'runPdfConvertBench', {}),
    inChild<PdfRssResult>('PDF conversion, peak RSS of a 500-page PDF', './pdf-convert.js', 'runPdfRssBench', {}),
  ),
);

// The office converters: units a second per type; DOC beside catdoc and antiword.
add(
  convertOfficeFigures(inChild<ConvertOfficeResult>('office, RTF and EPUB conversion', './convert-office.js', 'runConvertOfficeBench', {})),
);

// Conversions in the pipeline: a cold plan of 200 PDFs keeps every core busy; 10,000 unchanged converted documents plan as Markdown does.
add(convertSyncFigures(inChild<ConvertSyncResult>('conversions in the pipeline', './convert-sync.js', 'runConvertSyncBench', {})));

machine.loadAfter = currentLoad();
const markdown = renderReport(figures, {
  machine,
  command: 'npm run bench',
  files,
  full,
  durationS: Math.round((performance.now() - started) / 1000),
  notes,
});
const out = join(repoRoot(), 'docs', 'benchmarks.md');
// The scale tier's section (bench/scale-report.ts) is kept: this run does not measure it.
const scaleSection = existsSync(out) ? scaleSectionOf(readFileSync(out, 'utf8')) : null;
writeFileSync(out, scaleSection === null ? markdown : `${markdown}\n${scaleSection}\n`);
const missed = figures.filter((f) => f.target !== null && f.pass !== true);
console.log(
  `\nwrote ${out}; ${missed.length === 0 ? 'every target met' : `${missed.length} target(s) missed or not measured:\n${missed.map((f) => `  - ${f.name}`).join('\n')}`}`,
);
process.exitCode = missed.length === 0 ? 0 : 1;
