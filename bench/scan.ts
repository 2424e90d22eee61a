import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Source } from '../src/config/schema.js';
import { hashFiles, observeSources, scanFolder, type HashOutcome, type KnownFile } from '../src/sync/sources/index.js';
import { ensureBenchTree, type BenchTree } from './scan-tree.js';

/**
 * The sources' speed on a big tree, each figure beside a reference tool measured in the same run:
 * walk + compare of an unchanged tree (vs `rsync -an`), the same after a 1% change (with hashing),
 * and a cold hash of every file (vs `find | xargs -P2 sha256sum`).
 */
export type ScanBenchOptions = {
  /** @default 100_000 */
  files?: number;
  /** Where the tree is generated and cached. @default os.tmpdir()/kbsync-bench-<files>-<small|full> */
  dir?: string;
  /** Realistic sizes (~2.4 GB per 100k files) instead of 1–4 KB each. @default env KBSYNC_BENCH_FULL === "1" */
  full?: boolean;
  /** Timed runs per figure (the median is reported). @default 3 */
  runs?: number;
  log?: (line: string) => void;
};

/** One figure: the median of its runs, in ms (null when the reference tool is missing, with why). */
export type ScanBenchFigure = { name: string; medianMs: number | null; runsMs: number[]; note?: string };

export type ScanBenchResult = {
  tree: BenchTree & { candidates: number; candidateBytes: number };
  walk: ScanBenchFigure;
  unchangedInProcess: ScanBenchFigure;
  unchangedFreshProcess: ScanBenchFigure & { child: ChildReport | null };
  rsync: ScanBenchFigure;
  changedInProcess: ScanBenchFigure & { changedFiles: number };
  changedFreshProcess: ScanBenchFigure & { child: ChildReport | null };
  coldHash: ScanBenchFigure;
  sha256sum: ScanBenchFigure;
  /** The machine, and its 1-minute load average before and after: figures from a busy machine mislead. */
  machine: { cpus: number; node: string; loadBefore: number; loadAfter: number };
  /** ours / reference: < 1 means kbsync is faster. */
  ratios: { unchangedFreshVsRsync: number | null; coldHashVsSha256sum: number | null };
};

/** What the fresh child process measured inside itself. */
export type ChildReport = { startupMs: number; importMs: number; loadKnownMs: number; observeMs: number; hashed: number; files: number; maxRssMb: number };

const SOURCE_NAME = 'bench';

export async function runScanBench(options: ScanBenchOptions = {}): Promise<ScanBenchResult> {
  const files = options.files ?? 100_000;
  const full = options.full ?? process.env.KBSYNC_BENCH_FULL === '1';
  const runs = options.runs ?? 3;
  const log = options.log ?? (() => {});
  const base = options.dir ?? join(tmpdir(), `kbsync-bench-${files}-${full ? 'full' : 'small'}`);

  const loadBefore = round1(loadavg()[0] ?? 0);
  log(`tree: ${base} (${files} files, ${full ? 'full sizes' : '1-4 KB each'}), load average ${loadBefore}`);
  const tree = ensureBenchTree(base, files, full);
  if (tree.generatedMs !== null) log(`generated in ${tree.generatedMs} ms`);
  const source = benchSource(tree.dir);
  const scan = scanFolder({ name: SOURCE_NAME, root: tree.dir, include: ['**/*'], exclude: [], followSymlinks: false });
  const candidateBytes = scan.files.reduce((s, f) => s + f.size, 0);
  log(`${scan.files.length} candidate files (${mb(candidateBytes)} MB), ${scan.skipped.length} skipped`);

  const listFile = join(base, 'files.list');
  writeFileSync(listFile, scan.files.map((f) => f.absPath).join('\0'));
  // Alternated, so that neither side gets a warmer page cache or a quieter machine than the other.
  const shaMs: number[] = [];
  let shaNote: string | undefined;
  const hashMs: number[] = [];
  let hashes = new Map<string, HashOutcome>();
  for (let r = 0; r < runs; r++) {
    const sha = timeShell('find | xargs -P2 sha256sum', 1, `xargs -0 -P2 -n 256 sha256sum < '${listFile}' > /dev/null`, ['xargs', 'sha256sum']);
    shaMs.push(...sha.runsMs);
    shaNote = sha.note;
    const t0 = performance.now();
    hashes = await hashFiles(scan.files, { concurrency: 2, mode: 'workers' });
    hashMs.push(performance.now() - t0);
  }
  const sha256sum = figure('find | xargs -P2 sha256sum', shaNote === undefined ? shaMs : [], shaNote ?? 'page cache warm, as for kbsync');
  log(`sha256sum -P2: ${fmt(sha256sum)}`);
  const coldHash = figure('cold hash (no known hashes), 2 workers', hashMs, 'page cache warm, as for sha256sum');
  log(`cold hash: ${fmt(coldHash)}`);

  const known = new Map<string, KnownFile>();
  for (const f of scan.files) {
    const h = hashes.get(f.absPath);
    if (h !== undefined && 'sha256' in h) known.set(`${f.source}\0${f.path}`, { size: f.size, mtimeNs: f.mtimeNs, inode: f.inode, sha256: h.sha256 });
  }
  const knownFile = join(base, 'known.tsv');
  writeKnown(knownFile, known);
  const lookup = (s: string, p: string): KnownFile | undefined => known.get(`${s}\0${p}`);

  const walk = figure('walk (scanFolder)', await repeat(runs, () => scanFolder({ name: SOURCE_NAME, root: tree.dir, include: ['**/*'], exclude: [], followSymlinks: false })));
  log(`walk: ${fmt(walk)}`);
  const unchangedInProcess = figure('unchanged: walk + Map compare', await repeat(runs, () => observeSources([source], { stateDir: base, known: lookup })));
  log(`unchanged, in process: ${fmt(unchangedInProcess)}`);
  const unchangedFreshProcess = freshProcess('unchanged: fresh process', runs, tree.dir, knownFile);
  log(`unchanged, fresh process: ${fmt(unchangedFreshProcess)}`);

  const copy = join(base, 'copy');
  const rsync = hasCommands(['rsync'])
    ? (spawnSync('rsync', ['-a', '--delete', `${tree.dir}/`, `${copy}/`]), timeShell('rsync -an', runs, `rsync -an --delete '${tree.dir}/' '${copy}/' > /dev/null`, ['rsync']))
    : timeShell('rsync -an', runs, '', ['rsync']);
  log(`rsync -an: ${fmt(rsync)}`);

  const changed = scan.files.filter((_, i) => i % 100 === 0);
  for (const f of changed) appendFileSync(f.absPath, `\nedited ${Date.now()}\n`);
  const changedInProcess = { ...figure('1% changed: walk + compare + hash', await repeat(runs, () => observeSources([source], { stateDir: base, known: lookup }))), changedFiles: changed.length };
  log(`1% changed (${changed.length} files), in process: ${fmt(changedInProcess)}`);
  const changedFreshProcess = freshProcess('1% changed: fresh process', runs, tree.dir, knownFile);
  log(`1% changed, fresh process: ${fmt(changedFreshProcess)} (hashed ${changedFreshProcess.child?.hashed ?? '?'})`);

  return {
    tree: { ...tree, candidates: scan.files.length, candidateBytes },
    walk,
    unchangedInProcess,
    unchangedFreshProcess,
    rsync,
    changedInProcess,
    changedFreshProcess,
    coldHash,
    sha256sum,
    machine: { cpus: cpus().length, node: process.version, loadBefore, loadAfter: round1(loadavg()[0] ?? 0) },
    ratios: {
      unchangedFreshVsRsync: ratio(unchangedFreshProcess.medianMs, rsync.medianMs),
      coldHashVsSha256sum: ratio(coldHash.medianMs, sha256sum.medianMs),
    },
  };
}

function benchSource(dir: string): Source {
  return { name: SOURCE_NAME, path: dir, include: ['**/*'], exclude: [], followSymlinks: false };
}

async function repeat(runs: number, fn: () => unknown): Promise<number[]> {
  await fn(); // warm-up: JIT and the metadata cache, as a second `kbsync plan` would find them
  const ms: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return ms;
}

function figure(name: string, runsMs: number[], note?: string): ScanBenchFigure {
  const sorted = [...runsMs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return { name, medianMs: median === undefined ? null : Math.round(median), runsMs: runsMs.map(Math.round), ...(note === undefined ? {} : { note }) };
}

function hasCommands(names: string[]): boolean {
  return names.every((n) => spawnSync('sh', ['-c', `command -v ${n}`]).status === 0);
}

/** Times a shell command; a missing tool gives a null figure and says why (never fails the bench). */
function timeShell(name: string, runs: number, command: string, tools: string[]): ScanBenchFigure {
  const missing = tools.filter((t) => !hasCommands([t]));
  if (missing.length > 0) return figure(name, [], `skipped: ${missing.join(', ')} not installed`);
  const ms: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    const res = spawnSync('sh', ['-c', command], { stdio: ['ignore', 'ignore', 'pipe'] });
    ms.push(performance.now() - t0);
    if (res.status !== 0) return figure(name, [], `skipped: exited ${res.status}: ${String(res.stderr).slice(0, 200)}`);
  }
  return figure(name, ms);
}

/** A new node process per run: start-up, imports, loading the known fingerprints, the observe. */
function freshProcess(name: string, runs: number, treeDir: string, knownFile: string): ScanBenchFigure & { child: ChildReport | null } {
  const self = fileURLToPath(import.meta.url);
  const ms: number[] = [];
  let child: ChildReport | null = null;
  for (let r = 0; r < runs + 1; r++) {
    const t0 = performance.now();
    const res = spawnSync(process.execPath, [...process.execArgv, self, '--child', treeDir, knownFile], { encoding: 'utf8' });
    const dt = performance.now() - t0;
    if (res.status !== 0) return { ...figure(name, [], `failed: ${res.stderr.slice(0, 300)}`), child: null };
    if (r > 0) ms.push(dt); // the first run warms the OS caches for the node binary and modules
    child = JSON.parse(res.stdout) as ChildReport;
  }
  return { ...figure(name, ms, 'includes node start-up; known fingerprints loaded from a TSV file (not SQLite)'), child };
}

function writeKnown(path: string, known: Map<string, KnownFile>): void {
  const lines: string[] = [];
  for (const [key, k] of known) lines.push(`${key.replace('\0', '\t')}\t${k.size}\t${k.mtimeNs}\t${k.inode}\t${k.sha256}`);
  writeFileSync(path, lines.join('\n'));
}

/** The child side of freshProcess: prints a ChildReport. */
async function runChild(treeDir: string, knownFile: string): Promise<void> {
  const t0 = performance.now();
  const sources = await import('../src/sync/sources/index.js');
  const t1 = performance.now();
  // One Map per source, keyed by path: a lookup then hashes the walk's own path string (no key to build).
  const known = new Map<string, Map<string, KnownFile>>();
  for (const line of readFileSync(knownFile, 'utf8').split('\n')) {
    const [source, path, size, mtimeNs, inode, sha256] = line.split('\t');
    if (source === undefined || path === undefined || sha256 === undefined) continue;
    let bySource = known.get(source);
    if (bySource === undefined) known.set(source, (bySource = new Map()));
    bySource.set(path, { size: Number(size), mtimeNs: mtimeNs as string, inode: Number(inode), sha256 });
  }
  const t2 = performance.now();
  const observation = await sources.observeSources([benchSource(treeDir)], {
    stateDir: tmpdir(),
    known: (s, p) => known.get(s)?.get(p),
  });
  const t3 = performance.now();
  let hashed = 0;
  for (const f of observation.files) if (known.get(f.source)?.get(f.path)?.sha256 !== f.sha256) hashed += 1;
  const report: ChildReport = {
    // performance.now() counts from the process start: node start-up plus this module's static imports.
    startupMs: Math.round(t0),
    importMs: Math.round(t1 - t0),
    loadKnownMs: Math.round(t2 - t1),
    observeMs: Math.round(t3 - t2),
    hashed,
    files: observation.files.length,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  process.stdout.write(JSON.stringify(report));
}

function ratio(ours: number | null, reference: number | null): number | null {
  return ours === null || reference === null || reference === 0 ? null : Math.round((ours / reference) * 100) / 100;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

function mb(bytes: number): number {
  return Math.round(bytes / 1e6);
}

function fmt(f: ScanBenchFigure): string {
  return f.medianMs === null ? (f.note ?? 'n/a') : `${f.medianMs} ms (runs ${f.runsMs.join(', ')})`;
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && process.argv[2] === '--child') {
  await runChild(process.argv[3] ?? '', process.argv[4] ?? '');
} else if (isMain) {
  const files = process.argv.includes('--small') ? 10_000 : 100_000;
  const result = await runScanBench({ files, log: (line) => console.log(line) });
  console.log(JSON.stringify(result, null, 2));
}
