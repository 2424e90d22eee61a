import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { series, type Series } from './cli-runner.js';
import { timeProcess } from './measure.js';
import { kbsyncBin } from './paths.js';
import { benchTreeOf } from './scan-tree.js';
import { emptyFolderConfig, seededDaemonWorkspace } from './daemon-workspace.js';

/**
 * `kbsync plan` beside a running `kbsync watch` on the bench tree (seeded as synced): answered by the
 * daemon from what it holds in memory, beside the plan that walks the tree itself (`--no-daemon`,
 * reading the state beside the daemon: today's fresh walk) and the plan of an empty folder (the fixed
 * start of node and kbsync), each a fresh process, taking turns in each round, text report to
 * /dev/null. Also the daemon's answer after a change (one file touched before each run: the daemon
 * walks its kept index instead of answering from memory).
 */
export type DaemonPlanResult = {
  files: number;
  emptyPlan: Series;
  freshPlan: Series;
  daemonPlan: Series;
  daemonPlanAfterChange: Series;
  /** The daemon's own time per answer (its log's tookMs), from memory and after a walk (medians). */
  daemonTookMs: { memory: number | null; walk: number | null };
  /** Whether the daemon's answer was the fresh plan's, byte for byte (one untimed pair). */
  sameReport: boolean;
  problem: string | null;
};

export async function runDaemonPlanBench(options: {
  files?: number;
  full?: boolean;
  runs?: number;
  dir?: string;
  log?: (line: string) => void;
}): Promise<DaemonPlanResult> {
  const runs = options.runs ?? 11;
  const log = options.log ?? (() => {});
  const { files, base, tree } = benchTreeOf(options);
  const { work, statePath, source, config, seeded } = await seededDaemonWorkspace({
    base,
    name: 'daemon-plan',
    treeDir: tree.dir,
    watch: { debounceMs: 60_000, rescanMinutes: 60 },
    log,
  });
  const empty = await emptyFolderConfig(work, source);

  // The daemon's log goes to a file: a pipe this process does not read while it times plans would fill and stop it.
  const logPath = join(work, 'daemon.log');
  const logFd = openSync(logPath, 'w');
  const child = spawn(process.execPath, [kbsyncBin(), 'watch', '-c', config], {
    stdio: ['ignore', 'ignore', logFd],
    env: { ...process.env, KBSYNC_LOG_LEVEL: 'info' },
  });
  closeSync(logFd);
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let problem: string | null = null;
  const statusPath = `${statePath}.watch.json`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) {
      problem = `kbsync watch exited ${child.exitCode}`;
      break;
    }
    try {
      const s = JSON.parse(readFileSync(statusPath, 'utf8')) as { pid: number; ready: boolean };
      if (s.pid === child.pid && s.ready) break;
    } catch {
      // not there yet, or caught mid-write
    }
    if (Date.now() > deadline) {
      problem = 'the daemon was not ready within 180 s';
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }

  const plan = (cfg: string, ...args: string[]): { ms: number; problem: string | null; stdout: string; stderr: string } => {
    const out = join(work, 'plan.out');
    const fd = openSync(out, 'w');
    try {
      const run = timeProcess(process.execPath, [kbsyncBin(), 'plan', '-c', cfg, ...args], { stdio: ['ignore', fd, 'pipe'] });
      const stdout = readFileSync(out, 'utf8');
      return {
        ms: run.ms,
        problem: run.status === 0 ? null : `kbsync plan exited ${run.status}: ${run.stderr.slice(0, 300)}`,
        stdout,
        stderr: run.stderr,
      };
    } finally {
      closeSync(fd);
    }
  };
  const touched = join(tree.dir, existsSync(join(tree.dir, seeded.files[0]?.path ?? '')) ? (seeded.files[0]?.path ?? '') : '');
  const emptyRuns: number[] = [];
  const freshRuns: number[] = [];
  const daemonRuns: number[] = [];
  const changedRuns: number[] = [];
  let sameReport = false;
  if (problem === null) {
    const fromDaemon = plan(config);
    const fresh = plan(config, '--no-daemon');
    sameReport = fromDaemon.stdout === fresh.stdout && fromDaemon.stderr.includes('answered by the running kbsync watch');
    if (!sameReport) problem = `the daemon's answer is not the fresh plan's (stderr: ${fromDaemon.stderr.slice(0, 300)})`;
    for (let r = 0; r < runs && problem === null; r++) {
      const variants = [
        () => emptyRuns.push(timed(plan(empty))),
        () => freshRuns.push(timed(plan(config, '--no-daemon'))),
        () => daemonRuns.push(timed(plan(config))),
        () => {
          // A new mtime: an event, so the daemon's last answer is stale and it walks again.
          const at = new Date(Date.now() - 1000 * (r + 1));
          utimesSync(touched, at, at);
          changedRuns.push(timed(plan(config)));
        },
      ];
      for (let v = 0; v < variants.length; v++) (variants[(r + v) % variants.length] as () => number)();
    }
  }
  function timed(run: { ms: number; problem: string | null }): number {
    problem ??= run.problem;
    return run.ms;
  }
  child.kill('SIGTERM');
  await exited;
  const answers = readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"plan answered"'))
    .map((l) => JSON.parse(l) as { from: 'memory' | 'walk'; tookMs: number });
  const med = (xs: number[]): number | null =>
    xs.length === 0 ? null : ([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number);
  return {
    files,
    emptyPlan: series('kbsync plan of an empty folder (the fixed start of node and kbsync)', emptyRuns, problem),
    freshPlan: series('kbsync plan --no-daemon beside the daemon (a fresh walk of the tree, the state read read-only)', freshRuns, problem),
    daemonPlan: series('kbsync plan answered by the running kbsync watch (nothing changed since its last answer)', daemonRuns, problem),
    daemonPlanAfterChange: series(
      'kbsync plan answered by the running kbsync watch after a change (a walk over its kept index)',
      changedRuns,
      problem,
    ),
    daemonTookMs: {
      memory: med(answers.filter((a) => a.from === 'memory').map((a) => a.tookMs)),
      walk: med(answers.filter((a) => a.from === 'walk').map((a) => a.tookMs)),
    },
    sameReport,
    problem,
  };
}

/** Run alone: `node .bench-build/bench/daemon-plan.js` (KBSYNC_BENCH_FILES, KBSYNC_BENCH_SMALL as for the whole bench). */
if (process.argv[1]?.endsWith('daemon-plan.js')) {
  const result = await runDaemonPlanBench({ log: (line) => console.log(line), runs: Number(process.env.KBSYNC_BENCH_RUNS ?? 11) });
  console.log(JSON.stringify(result, null, 2));
}
