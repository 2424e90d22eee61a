import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/** The median of `xs` (null for none), rounded to 0.1. */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const m = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return round1(m);
}

export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** ours / reference, to 0.01 (null when either is missing). */
export function ratio(ours: number | null, reference: number | null): number | null {
  return ours === null || reference === null || reference === 0 ? null : Math.round((ours / reference) * 100) / 100;
}

/** True when `command` runs here (found on PATH). */
export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** One timed child process: its wall time, exit status and stderr (stdout as `options.stdio` says). */
export type TimedRun = { ms: number; status: number | null; stderr: string };

/** Runs `file args` to completion and times it from spawn to exit (wall clock). */
export function timeProcess(file: string, args: readonly string[], options: SpawnSyncOptions = {}): TimedRun {
  const t0 = performance.now();
  const res = spawnSync(file, args, { maxBuffer: 256 << 20, ...options });
  const ms = performance.now() - t0;
  const stderr = res.stderr === null || res.stderr === undefined ? '' : String(res.stderr);
  return { ms, status: res.status, stderr: res.error === undefined ? stderr : `${res.error.message}\n${stderr}` };
}

/** Runs a shell command line, timed; stdout and stdin are /dev/null. */
export function timeShell(command: string): TimedRun {
  return timeProcess('sh', ['-c', command], { stdio: ['ignore', 'ignore', 'pipe'] });
}
