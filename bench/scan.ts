import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Source } from '../src/config/schema.js';
import { hashFiles, knownFiles, observeSources, scanFolder, type KnownFile } from '../src/sync/sources/index.js';
import { hasCommand, median, timeShell } from './measure.js';
import { bareWalk, benchTreeOf, type BenchTree } from './scan-tree.js';

/**
 * The sources' speed on a big tree, in one process (diagnostics behind the CLI figures of
 * cli-speed.ts): the walk beside a bare readdirSync + lstatSync walk, the walk + compare of an
 * unchanged tree and after a 1% change (with hashing), and a cold hash of every file beside
 * `xargs -P2 sha256sum`. Each reference runs alternately with its figure.
 */
export type ScanBenchOptions = {
  /** @default env KBSYNC_BENCH_FILES or 100_000 */
  files?: number;
  /** Where the tree is generated and cached. @default os.tmpdir()/kbsync-bench-<files>-<small|full> */
  dir?: string;
  /** Realistic sizes (~2.4 GB per 100k files) instead of 1–4 KB each. @default true, unless env KBSYNC_BENCH_SMALL is "1" */
  full?: boolean;
  /** Timed runs per figure (the median is reported), after one warm-up. @default 3 */
  runs?: number;
  log?: (line: string) => void;
};

/** One figure: the median of its runs, in ms (null when it could not be measured, with why). */
export type ScanBenchFigure = { name: string; medianMs: number | null; runsMs: number[]; note?: string };

export type ScanBenchResult = {
  tree: BenchTree & { candidates: number; candidateBytes: number };
  bareWalk: ScanBenchFigure;
  walk: ScanBenchFigure;
  unchanged: ScanBenchFigure;
  changed: ScanBenchFigure & { changedFiles: number };
  coldHash: ScanBenchFigure;
  sha256sum: ScanBenchFigure;
};

const SOURCE_NAME = 'bench';

export async function runScanBench(options: ScanBenchOptions = {}): Promise<ScanBenchResult> {
  const runs = options.runs ?? 3;
  const log = options.log ?? (() => {});
  const { files, base, tree } = benchTreeOf(options);
  const source: Source = { name: SOURCE_NAME, path: tree.dir, include: ['**/*'], exclude: [], followSymlinks: false };
  const spec = { name: SOURCE_NAME, root: tree.dir, include: ['**/*'], exclude: [], followSymlinks: false };
  const scan = scanFolder(spec);
  const candidateBytes = scan.files.reduce((s, f) => s + f.size, 0);
  log(`${scan.files.length} candidate files (${Math.round(candidateBytes / 1e6)} MB), ${scan.skipped.length} skipped`);

  const [bareMs = [], walkMs = []] = await alternate(
    runs,
    () => bareWalk(tree.dir).files,
    () => scanFolder(spec),
  );
  const bareWalkFigure = figure('bare readdirSync + lstatSync walk (no rules, no objects)', bareMs);
  const walk = figure('walk (scanFolder: ignore rules, filters, sorted)', walkMs);
  log(`walk ${walk.medianMs} ms, bare walk ${bareWalkFigure.medianMs} ms`);

  const listFile = join(base, 'files.list');
  writeFileSync(listFile, scan.files.map((f) => f.absPath).join('\0'));
  const shaLine = `xargs -0 -P2 -n 256 sha256sum < '${listFile}' > /dev/null`;
  const canSha = hasCommand('xargs') && hasCommand('sha256sum');
  const known = new Map<string, Map<string, KnownFile>>();
  const [coldMs = [], shaMs = []] = await alternate(
    runs,
    async () => {
      const hashes = await hashFiles(scan.files, { concurrency: 2, mode: 'workers' });
      known.clear();
      for (const f of scan.files) {
        const h = hashes.get(f.absPath);
        if (h === undefined || !('sha256' in h)) continue;
        let bySource = known.get(f.source);
        if (bySource === undefined) known.set(f.source, (bySource = new Map()));
        bySource.set(f.path, { size: f.size, mtimeNs: f.mtimeNs, inode: f.inode, sha256: h.sha256 });
      }
    },
    () => (canSha ? timeShell(shaLine) : undefined),
  );
  const coldHash = figure('cold hash of every candidate (2 worker threads)', coldMs, 'page cache warm, as for sha256sum');
  const sha256sum = figure(
    'xargs -0 -P2 sha256sum (the same files)',
    canSha ? shaMs : [],
    canSha ? undefined : 'sha256sum or xargs is not installed (apt-get install -y coreutils findutils)',
  );
  log(`cold hash ${coldHash.medianMs} ms, sha256sum -P2 ${sha256sum.medianMs} ms`);

  const lookup = knownFiles((s: string, p: string): KnownFile | undefined => known.get(s)?.get(p));
  const [unchangedMs = []] = await alternate(runs, () => observeSources([source], { stateDir: base, known: lookup }));
  const unchanged = figure('unchanged tree: walk + compare with the known fingerprints', unchangedMs);
  const every = Math.max(1, Math.floor(scan.files.length / Math.max(1, Math.round(files / 100))));
  const changedFiles = scan.files.filter((_, i) => i % every === 0).slice(0, Math.round(files / 100));
  for (const f of changedFiles) appendFileSync(f.absPath, `\nedited ${Date.now()}\n`);
  const [changedMs = []] = await alternate(runs, () => observeSources([source], { stateDir: base, known: lookup }));
  const changed = {
    ...figure(`${changedFiles.length} files changed: walk + compare + hash them`, changedMs),
    changedFiles: changedFiles.length,
  };
  log(`observe: unchanged ${unchanged.medianMs} ms, 1% changed ${changed.medianMs} ms`);

  return {
    tree: { ...tree, candidates: scan.files.length, candidateBytes },
    bareWalk: bareWalkFigure,
    walk,
    unchanged,
    changed,
    coldHash,
    sha256sum,
  };
}

/**
 * Runs the given tasks in turn, `runs` times after one untimed round (JIT, caches), and returns
 * each task's wall times. Alternating keeps a change in the machine's load from favouring one side.
 */
async function alternate(runs: number, ...tasks: (() => unknown)[]): Promise<number[][]> {
  for (const task of tasks) await task();
  const times = tasks.map(() => [] as number[]);
  for (let r = 0; r < runs; r++) {
    for (const [i, task] of tasks.entries()) {
      const t0 = performance.now();
      await task();
      times[i]?.push(performance.now() - t0);
    }
  }
  return times;
}

function figure(name: string, runsMs: number[], note?: string): ScanBenchFigure {
  return { name, medianMs: median(runsMs), runsMs: runsMs.map(Math.round), ...(note === undefined ? {} : { note }) };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await runScanBench({ log: (line) => console.error(line) }), null, 2));
}
