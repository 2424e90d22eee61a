import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { median, timeProcess } from './measure.js';
import { kbsyncBin } from './paths.js';

/** Timed runs of one command, and what went wrong (null when every run did what it should). */
export type Series = { name: string; runsMs: number[]; medianMs: number | null; problem: string | null };

/** The `--json` summary of a plan. */
export type PlanSummary = { uploaded: number; unchanged: number; renamed: number; skipped: number; deferred: number; failed: number };

export function series(name: string, runsMs: number[], problem: string | null = null): Series {
  return { name, runsMs: runsMs.map((ms) => Math.round(ms)), medianMs: problem === null ? median(runsMs) : null, problem };
}

/** A loopback port nothing listens on (bound, then released). */
export async function unusedLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('bench: no port');
  return address.port;
}

export type TargetConfig = { kind: 'remote'; port: number } | { kind: 'embedded'; dataDir: string };

/** Writes a kbsync.yaml with one folder source, no budget limit in practice, and the given target; returns its path. */
export function writeConfig(path: string, o: { treeDir: string; statePath: string; target: TargetConfig }): string {
  const target =
    o.target.kind === 'remote'
      ? `  kind: remote\n  baseUrl: http://127.0.0.1:${o.target.port}\n  apiKey: bench-not-a-real-key\n`
      : `  kind: embedded\n  dataDir: ${JSON.stringify(o.target.dataDir)}\n`;
  const cap = 1_000_000_000;
  writeFileSync(
    path,
    `target:\n${target}  plan: enterprise\nstate: ${JSON.stringify(o.statePath)}\n` +
      `budget: { maxCreditsPerRun: ${cap}, maxCreditsPerDay: ${cap}, maxCreditsPerMonth: ${cap} }\n` +
      `sources:\n  - { name: bench, path: ${JSON.stringify(o.treeDir)} }\n`,
  );
  return path;
}

/**
 * `node bin/kbsync.js plan -c <config> [--json] > /dev/null` in a fresh process, timed from spawn
 * to exit. `nodeArgs` go before the script (a preload). A non-zero exit is a problem, with stderr.
 */
export function timePlan(
  config: string,
  nodeArgs: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
  output: 'json' | 'text' = 'json',
): { ms: number; problem: string | null } {
  const devNull = openSync('/dev/null', 'w');
  try {
    const args = [...nodeArgs, kbsyncBin(), 'plan', '-c', config, ...(output === 'json' ? ['--json'] : [])];
    const run = timeProcess(process.execPath, args, { stdio: ['ignore', devNull, 'pipe'], env });
    return { ms: run.ms, problem: run.status === 0 ? null : `kbsync plan exited ${run.status}: ${run.stderr.trim().slice(0, 400)}` };
  } finally {
    closeSync(devNull);
  }
}

/** One untimed plan whose JSON is kept: its summary, or why there is none. */
export function planSummary(config: string, scratch: string): { summary: PlanSummary | null; problem: string | null } {
  const out = join(scratch, 'plan-output.json');
  const fd = openSync(out, 'w');
  try {
    const run = timeProcess(process.execPath, [kbsyncBin(), 'plan', '-c', config, '--json'], { stdio: ['ignore', fd, 'pipe'] });
    if (run.status !== 0) return { summary: null, problem: `kbsync plan exited ${run.status}: ${run.stderr.trim().slice(0, 400)}` };
  } finally {
    closeSync(fd);
  }
  try {
    return { summary: (JSON.parse(readFileSync(out, 'utf8')) as { summary: PlanSummary }).summary, problem: null };
  } catch (err) {
    return { summary: null, problem: `kbsync plan printed no JSON document (${(err as Error).message})` };
  } finally {
    rmSync(out, { force: true });
  }
}

/** Problems with a summary: each expected count that differs. */
export function summaryProblem(summary: PlanSummary | null, expected: Partial<PlanSummary>): string | null {
  if (summary === null) return 'no summary';
  const wrong = Object.entries(expected).filter(([key, value]) => summary[key as keyof PlanSummary] !== value);
  return wrong.length === 0
    ? null
    : `unexpected plan: ${wrong.map(([k, v]) => `${k} ${summary[k as keyof PlanSummary]} (expected ${v})`).join(', ')}`;
}

/** The modules one `kbsync plan` loads (through the ESM loader), via the module-trace preload. */
export function loadedModules(config: string, scratch: string): { urls: string[]; problem: string | null } {
  const traceFile = join(scratch, 'modules.txt');
  rmSync(traceFile, { force: true });
  const preload = new URL('./module-trace.js', import.meta.url).href;
  const run = timePlan(config, ['--import', preload], { ...process.env, KBSYNC_BENCH_TRACE_FILE: traceFile });
  if (run.problem !== null) return { urls: [], problem: run.problem };
  if (!existsSync(traceFile)) return { urls: [], problem: 'the module trace wrote nothing' };
  return {
    urls: readFileSync(traceFile, 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
    problem: null,
  };
}
