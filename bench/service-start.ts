import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { planSummary, series, summaryProblem, timePlan, writeConfig, type Series } from './cli-runner.js';
import { timeProcess } from './measure.js';
import { kbsyncBin } from './paths.js';

/**
 * Issue 15: how long the local service takes to start, in fresh processes, beside `node -e 0` run
 * alternately in the same loop (each round rotates which comes first): `kbsync serve --port 0` on an
 * existing data folder and on a new one, timed from spawn to its `listening on` line; and a first
 * `kbsync plan` of an empty folder with the embedded target (a new state and a new data folder each
 * run), timed from spawn to exit. One untimed start before the loop creates the existing data folder
 * (and fills node's compile cache, as any earlier start on the machine has).
 */
export type ServiceStartOptions = {
  /** Timed runs of each (medians are reported). @default 11 */
  runs?: number;
  log?: (line: string) => void;
};

export type ServiceStartResult = { nodeStart: Series; serveExisting: Series; serveNew: Series; firstPlan: Series };

/** What a `kbsync serve` start may take at most before it counts as hung. */
const START_TIMEOUT_MS = 30_000;

export async function runServiceStartBench(options: ServiceStartOptions = {}): Promise<ServiceStartResult> {
  const runs = options.runs ?? 11;
  const log = options.log ?? (() => {});
  const work = mkdtempSync(join(tmpdir(), 'kbsync-bench-service-'));
  try {
    const existing = join(work, 'existing');
    const emptyDir = join(work, 'empty-source');
    mkdirSync(emptyDir);
    const warm = await timeServeStart(existing);
    let check = warm.problem;
    if (check === null) {
      const config = firstPlanConfig(work, 'check', emptyDir);
      const summary = planSummary(config, work);
      check = summary.problem ?? summaryProblem(summary.summary, { uploaded: 0, unchanged: 0, failed: 0 });
    }

    const nodeRuns: number[] = [];
    const existingRuns: number[] = [];
    const newRuns: number[] = [];
    const planRuns: number[] = [];
    let serveProblem: string | null = warm.problem;
    let planProblem: string | null = check;
    for (let r = 0; r < runs; r++) {
      const variants: (() => Promise<void>)[] = [
        async () => {
          nodeRuns.push(timeProcess(process.execPath, ['-e', '0'], { stdio: 'ignore' }).ms);
        },
        async () => {
          const s = await timeServeStart(existing);
          serveProblem ??= s.problem;
          existingRuns.push(s.ms);
        },
        async () => {
          const s = await timeServeStart(join(work, `new-${r}`));
          serveProblem ??= s.problem;
          newRuns.push(s.ms);
        },
        async () => {
          const config = firstPlanConfig(work, `plan-${r}`, emptyDir);
          const p = timePlan(config);
          planProblem ??= p.problem;
          planRuns.push(p.ms);
        },
      ];
      for (let v = 0; v < variants.length; v++) await (variants[(r + v) % variants.length] as () => Promise<void>)();
    }
    const result: ServiceStartResult = {
      nodeStart: series('node -e 0 (node start-up alone)', nodeRuns),
      serveExisting: series('kbsync serve --port 0, existing data folder: spawn to "listening on"', existingRuns, serveProblem),
      serveNew: series('kbsync serve --port 0, new data folder: spawn to "listening on"', newRuns, serveProblem),
      firstPlan: series(
        'first kbsync plan --json of an empty folder, embedded target (new state, new data folder): spawn to exit',
        planRuns,
        planProblem,
      ),
    };
    log(
      `node ${result.nodeStart.medianMs} ms; serve (existing) ${result.serveExisting.medianMs ?? result.serveExisting.problem} ms, ` +
        `(new) ${result.serveNew.medianMs ?? result.serveNew.problem} ms; first plan ${result.firstPlan.medianMs ?? result.firstPlan.problem} ms`,
    );
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A kbsync.yaml in a new folder `work/name`: the embedded target in that folder, its state there too, one source `emptyDir`. */
function firstPlanConfig(work: string, name: string, emptyDir: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  return writeConfig(join(dir, 'kbsync.yaml'), {
    treeDir: emptyDir,
    statePath: join(dir, 'state', 'state.db'),
    target: { kind: 'embedded', dataDir: join(dir, 'service') },
  });
}

/**
 * Starts `kbsync serve --port 0 --data dataDir` and times it from spawn to its first line
 * (`listening on ...`); then stops it with SIGTERM and waits for its exit (untimed).
 */
export function timeServeStart(dataDir: string): Promise<{ ms: number; problem: string | null }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [kbsyncBin(), 'serve', '--port', '0', '--data', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let ms: number | null = null;
    let problem: string | null = null;
    const timer = setTimeout(() => {
      problem = `no "listening on" line within ${START_TIMEOUT_MS} ms`;
      child.kill('SIGKILL');
    }, START_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      if (ms !== null || !stdout.includes('\n')) return;
      ms = performance.now() - t0;
      if (!stdout.startsWith('listening on ')) problem = `first line is not "listening on": ${stdout.split('\n')[0]?.slice(0, 200)}`;
      child.kill('SIGTERM');
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (ms === null) problem ??= `kbsync serve exited ${code} before listening: ${stderr.trim().slice(0, 400)}`;
      resolve({ ms: ms ?? 0, problem });
    });
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runServiceStartBench({ log: (line) => console.error(line) });
  console.log(JSON.stringify(result, null, 2));
}
