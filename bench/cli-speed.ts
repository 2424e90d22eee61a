import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Source } from '../src/config/schema.js';
import {
  loadedModules,
  planSummary,
  series,
  summaryProblem,
  timePlan,
  unusedLoopbackPort,
  writeConfig,
  type Series,
} from './cli-runner.js';
import { hasCommand, round1, timeProcess, timeShell } from './measure.js';
import { benchTreeOf, type BenchTree } from './scan-tree.js';
import { seedSyncedState } from './seed-state.js';
import { emptyFolderConfig } from './daemon-workspace.js';

/**
 * The end-to-end speed targets, measured with the real CLI in fresh processes on a
 * generated tree whose state is fully synced: `kbsync plan --json` on the unchanged tree (remote
 * target at an unused loopback port: a warm plan must not touch the network; and embedded: it must
 * not start the service), after a 1% change, and with an empty state (a cold first scan that hashes
 * everything); each beside a reference tool run alternately in the same loop (`rsync -an`,
 * `xargs -P2 sha256sum`); and the state's size per tracked file. The variants of a figure take
 * turns being first in each round, so none always runs right after the reference; each timed
 * 1%-changed run follows a fresh (untimed) edit of its files, as a plan follows a user's edits.
 */
export type CliSpeedOptions = {
  /** @default env KBSYNC_BENCH_FILES or 100_000 */
  files?: number;
  /** Realistic sizes (~2.4 GB per 100k files) instead of 1–4 KB each. @default true, unless env KBSYNC_BENCH_SMALL is "1" */
  full?: boolean;
  /** Timed runs per figure (medians are reported); the cold scan runs min(runs, 3) times. @default 11 */
  runs?: number;
  /** Where the tree is generated and cached. @default os.tmpdir()/kbsync-bench-<files>-<small|full> */
  dir?: string;
  log?: (line: string) => void;
};

export type CliSpeedResult = {
  tree: BenchTree & { candidates: number; candidateBytes: number };
  seed: { observeMs: number; recordMs: number; trackedFiles: number; stateBytes: number; avgPathChars: number };
  unchanged: Series;
  unchangedText: Series;
  unchangedEmbedded: Series & { serviceStarted: boolean };
  rsync: Series;
  changed: Series & { changedFiles: number };
  changedText: Series;
  rsyncChanged: Series;
  cold: Series;
  sha256sum: Series;
  modules: { undiciLoaded: boolean | null; count: number; notable: string[]; problem: string | null };
  nodeStart: Series;
  emptyPlan: Series;
};

const SOURCE_NAME = 'bench';
/** Packages whose presence in a warm plan's module list is worth showing. */
const NOTABLE = [
  'undici',
  'zod',
  'yaml',
  'pino',
  'p-queue',
  '@fastify/busboy',
  'better-sqlite3',
  'ignore',
  'picomatch',
  'commander',
  'simple-git',
];

export async function runCliSpeedBench(options: CliSpeedOptions = {}): Promise<CliSpeedResult> {
  const runs = options.runs ?? 11;
  const log = options.log ?? (() => {});
  const { files, full, base, tree } = benchTreeOf(options);
  log(
    `tree ${tree.dir}: ${files} files, ${full ? 'realistic sizes' : '1-4 KB each'}${tree.generatedMs === null ? ' (cached)' : `, generated in ${tree.generatedMs} ms`}`,
  );
  const work = join(base, 'cli');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const statePath = join(work, 'state', 'state.db');

  const source: Source = { name: SOURCE_NAME, path: tree.dir, include: ['**/*'], exclude: [], followSymlinks: false };
  const seeded = await seedSyncedState(statePath, source, join(work, 'state'));
  const stateBytes = fileBytes(statePath) + fileBytes(`${statePath}-wal`);
  settle();
  const candidateBytes = seeded.files.reduce((sum, f) => sum + f.size, 0);
  const avgPathChars = seeded.files.reduce((sum, f) => sum + f.path.length, 0) / Math.max(1, seeded.files.length);
  log(
    `seeded ${seeded.files.length} tracked files: observe ${Math.round(seeded.observeMs)} ms, bookkeeping ${Math.round(seeded.recordMs)} ms, state ${stateBytes} bytes`,
  );

  const remote = writeConfig(join(work, 'remote.yaml'), {
    treeDir: tree.dir,
    statePath,
    target: { kind: 'remote', port: await unusedLoopbackPort() },
  });
  const warmDataDir = join(work, 'embedded-service');
  const embedded = writeConfig(join(work, 'embedded.yaml'), {
    treeDir: tree.dir,
    statePath,
    target: { kind: 'embedded', dataDir: warmDataDir },
  });
  const coldDir = join(work, 'cold');
  const cold = writeConfig(join(work, 'cold.yaml'), {
    treeDir: tree.dir,
    statePath: join(coldDir, 'state', 'state.db'),
    target: { kind: 'embedded', dataDir: join(coldDir, 'service') },
  });

  const tracked = seeded.files.length;
  const copy = join(base, 'copy');
  const rsyncLine = hasCommand('rsync') ? `rsync -an --delete '${tree.dir}/' '${copy}/' > /dev/null` : null;
  if (rsyncLine !== null) spawnSync('rsync', ['-a', '--delete', `${tree.dir}/`, `${copy}/`]);

  // Unchanged: the plan with each target, then rsync, alternated so that each sees the same machine.
  const unchangedCheck = planSummary(remote, work);
  const unchangedProblem = unchangedCheck.problem ?? summaryProblem(unchangedCheck.summary, { unchanged: tracked, uploaded: 0 });
  const embeddedCheck = planSummary(embedded, work);
  const embeddedProblem = embeddedCheck.problem ?? summaryProblem(embeddedCheck.summary, { unchanged: tracked, uploaded: 0 });
  const plans: number[] = [];
  const textPlans: number[] = [];
  const embeddedPlans: number[] = [];
  const rsyncs: number[] = [];
  let loopProblem: string | null = null;
  const timed = (run: { ms: number; problem: string | null }): number => {
    loopProblem ??= run.problem;
    return run.ms;
  };
  let rsyncProblem: string | null = rsyncLine === null ? 'rsync is not installed (apt-get install -y rsync)' : null;
  for (let r = 0; r < runs; r++) {
    // Each round runs the three plans in a rotated order: none always comes first after rsync.
    const variants = [
      () => plans.push(timed(timePlan(remote))),
      () => textPlans.push(timed(timePlan(remote, [], process.env, 'text'))),
      () => embeddedPlans.push(timed(timePlan(embedded))),
    ];
    for (let v = 0; v < variants.length; v++) (variants[(r + v) % variants.length] as () => number)();
    if (rsyncLine !== null) {
      const s = timeShell(rsyncLine);
      if (s.status !== 0) rsyncProblem ??= `rsync exited ${s.status}: ${s.stderr.slice(0, 200)}`;
      rsyncs.push(s.ms);
    }
  }
  const unchanged = series('kbsync plan --json, unchanged tree (remote target)', plans, unchangedProblem ?? loopProblem);
  const unchangedText = series('kbsync plan, unchanged tree (remote target; text report)', textPlans, unchangedProblem ?? loopProblem);
  const serviceStarted = existsSync(warmDataDir);
  const unchangedEmbedded = {
    ...series('kbsync plan --json, unchanged tree (embedded target)', embeddedPlans, embeddedProblem ?? loopProblem),
    serviceStarted,
  };
  const rsync = series('rsync -an (same tree, against an identical copy)', rsyncs, rsyncProblem);
  log(
    `unchanged: plan ${unchanged.medianMs ?? unchanged.problem} ms (embedded ${unchangedEmbedded.medianMs ?? unchangedEmbedded.problem}, service started: ${serviceStarted}), rsync -an ${rsync.medianMs ?? rsync.problem} ms`,
  );

  // Where the fixed cost goes: node alone, and a plan of an empty folder (start-up, imports, config, state).
  const empty = await emptyFolderConfig(work, source);
  const nodeRuns: number[] = [];
  const emptyRuns: number[] = [];
  let emptyProblem: string | null = null;
  for (let r = 0; r < runs; r++) {
    nodeRuns.push(timeProcess(process.execPath, ['-e', '0'], { stdio: 'ignore' }).ms);
    const e = timePlan(empty);
    emptyProblem ??= e.problem;
    emptyRuns.push(e.ms);
  }
  const nodeStart = series('node -e 0 (node start-up alone)', nodeRuns);
  const emptyPlan = series('kbsync plan --json of an empty folder (start-up, imports, config, state open)', emptyRuns, emptyProblem);
  log(`fixed costs: node ${nodeStart.medianMs} ms, plan of an empty folder ${emptyPlan.medianMs ?? emptyPlan.problem} ms`);

  const trace = loadedModules(remote, work);
  const undiciLoaded = trace.problem === null ? trace.urls.some((u) => u.includes('/node_modules/undici/')) : null;
  const notable = NOTABLE.filter((name) => trace.urls.some((u) => u.includes(`/node_modules/${name}/`)));
  const modules = { undiciLoaded, count: trace.urls.length, notable, problem: trace.problem };
  log(`modules a warm plan loads: ${modules.count} (${notable.join(', ')})`);

  // 1% changed: 1% of the tree's files (1,000 of 100k), spread evenly over the candidates, rewritten (appended to);
  // the state keeps the old fingerprints, so every run hashes them again.
  const every = Math.max(1, Math.floor(tracked / Math.max(1, Math.round(files / 100))));
  const changedFiles = seeded.files.filter((_, i) => i % every === 0).slice(0, Math.round(files / 100));
  // Every timed run follows a fresh edit of the same files (untimed), as a user's plan follows their
  // edits: the files are then in the page cache, as just-written files are, and the state still has
  // their first fingerprints, so each run hashes all of them. The edit is flushed to disk first (as
  // saved files are by the time someone runs a plan), so the disk's writeback is not timed.
  const edit = (): void => {
    for (const f of changedFiles) appendFileSync(f.absPath, `\nedited for the benchmark ${Date.now()}\n`);
    settle();
  };
  edit();
  const changedCheck = planSummary(remote, work);
  const changedProblem =
    changedCheck.problem ??
    summaryProblem(changedCheck.summary, { uploaded: changedFiles.length, unchanged: tracked - changedFiles.length });
  const changedRuns: number[] = [];
  const changedTextRuns: number[] = [];
  const rsyncChangedRuns: number[] = [];
  loopProblem = null;
  for (let r = 0; r < runs; r++) {
    const variants = [
      () => changedRuns.push(timed(timePlan(remote))),
      () => changedTextRuns.push(timed(timePlan(remote, [], process.env, 'text'))),
    ];
    for (let v = 0; v < variants.length; v++) {
      edit();
      (variants[(r + v) % variants.length] as () => number)();
    }
    if (rsyncLine !== null) rsyncChangedRuns.push(timeShell(rsyncLine).ms);
  }
  const changed = {
    ...series(`kbsync plan --json, ${changedFiles.length} files changed (hashed)`, changedRuns, changedProblem ?? loopProblem),
    changedFiles: changedFiles.length,
  };
  const changedText = series(
    `kbsync plan, ${changedFiles.length} files changed (hashed; text report)`,
    changedTextRuns,
    changedProblem ?? loopProblem,
  );
  const rsyncChanged = series('rsync -an (same tree, after the change)', rsyncChangedRuns, rsyncProblem);
  log(`1% changed: plan ${changed.medianMs ?? changed.problem} ms, rsync -an ${rsyncChanged.medianMs ?? rsyncChanged.problem} ms`);

  // Cold: an empty state and a new embedded service each run, so every file is hashed; sha256sum -P2 over the same files.
  const listFile = join(work, 'candidates.list');
  writeFileSync(listFile, seeded.files.map((f) => f.absPath).join('\0'));
  const shaLine = hasCommand('sha256sum') && hasCommand('xargs') ? `xargs -0 -P2 -n 256 sha256sum < '${listFile}' > /dev/null` : null;
  const coldRuns: number[] = [];
  const shaRuns: number[] = [];
  let coldProblem: string | null = null;
  let shaProblem: string | null = shaLine === null ? 'sha256sum or xargs is not installed (apt-get install -y coreutils findutils)' : null;
  for (let r = 0; r < Math.min(runs, 3); r++) {
    if (shaLine !== null) {
      const s = timeShell(shaLine);
      if (s.status !== 0) shaProblem ??= `sha256sum exited ${s.status}: ${s.stderr.slice(0, 200)}`;
      shaRuns.push(s.ms);
    }
    rmSync(coldDir, { recursive: true, force: true });
    if (r === 0) {
      const check = planSummary(cold, work);
      coldProblem = check.problem ?? summaryProblem(check.summary, { uploaded: tracked, unchanged: 0 });
      rmSync(coldDir, { recursive: true, force: true });
    }
    const a = timePlan(cold);
    coldProblem ??= a.problem;
    coldRuns.push(a.ms);
  }
  const coldSeries = series('kbsync plan --json, empty state (cold first scan: every file hashed)', coldRuns, coldProblem);
  const sha256sum = series('xargs -0 -P2 sha256sum (the same files)', shaRuns, shaProblem);
  log(`cold: plan ${coldSeries.medianMs ?? coldSeries.problem} ms, sha256sum -P2 ${sha256sum.medianMs ?? sha256sum.problem} ms`);

  return {
    tree: { ...tree, candidates: tracked, candidateBytes },
    seed: {
      observeMs: Math.round(seeded.observeMs),
      recordMs: Math.round(seeded.recordMs),
      trackedFiles: tracked,
      stateBytes,
      avgPathChars: round1(avgPathChars),
    },
    unchanged,
    unchangedText,
    unchangedEmbedded,
    rsync,
    changed,
    changedText,
    rsyncChanged,
    cold: coldSeries,
    sha256sum,
    modules,
    nodeStart,
    emptyPlan,
  };
}

function fileBytes(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runCliSpeedBench({ log: (line) => console.error(line) });
  console.log(JSON.stringify(result, null, 2));
}

/** Flushes written data to disk (untimed), so that the kernel's writeback of it does not run inside a timed run. */
function settle(): void {
  spawnSync('sync', { stdio: 'ignore' });
}
