import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { trackedKey } from '../src/sync/tracked/keys.js';
import { planSync } from '../src/sync/planner/plan-sync.js';
import type { ObservedFile, PlanInput, TrackedFile } from '../src/sync/types.js';

/** One planner benchmark figure: the median and best of several timed runs, and the ratio to the reference. */
export type PlanBenchFigure = {
  name: string;
  files: number;
  changed: number;
  /** Wall-clock median and best. */
  medianMs: number;
  minMs: number;
  /** Median CPU time of this process (user + system): steadier than wall time on a shared machine. */
  cpuMedianMs: number;
  runs: number;
  /** cpuMedianMs divided by the reference's. */
  ratioToReference: number;
};

function sha(i: number): string {
  return createHash('sha256').update(String(i)).digest('hex');
}

/**
 * A tree of `files` files over nested folders, all tracked; every (files/changed)-th file has new
 * content. Sorted by path as the sources and the state deliver them, unless `shuffled`.
 */
function benchInput(files: number, changed: number, shuffled = false): PlanInput {
  const observed: ObservedFile[] = [];
  const rows: TrackedFile[] = [];
  const every = changed > 0 ? Math.floor(files / changed) : 0;
  for (let i = 0; i < files; i++) {
    const path = `dir${i % 100}/sub${(i >> 7) % 50}/file-${i}.md`;
    const size = 2000 + (i % 5000);
    const mtimeNs = `17000000000${i}`;
    const sha256 = every > 0 && i % every === 0 ? sha(-i - 1) : sha(i);
    observed.push({ source: 'docs', path, absPath: `/data/${path}`, size, mtimeNs, inode: i, sha256 });
    rows.push({
      source: 'docs',
      path,
      size,
      mtimeNs,
      inode: i,
      sha256: sha(i),
      remoteName: path,
      remoteId: String(i + 1),
      remoteStatus: 'processed',
      reprocessAttempts: 0,
      remoteError: null,
      lastAction: 'upload',
      lastReason: 'new file',
      updatedAt: '2024-01-01T00:00:00.000Z',
    });
  }
  const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  observed.sort(byPath);
  rows.sort(byPath);
  if (shuffled) observed.reverse();
  return {
    observation: { files: observed, skipped: [], sources: [{ name: 'docs', kind: 'folder', root: '/data', commit: null, scope: null }] },
    tracked: new Map(rows.map((t) => [trackedKey(t.source, t.path), t])),
    remote: null,
    plan: 'pro',
    limits: { maxFileBytes: null },
    budget: { caps: { run: 1e9, day: 1e9, month: 1e9 }, used: { run: 0, day: 0, month: 0 } },
    reindexMinChangedFiles: 20,
    maxReprocessAttempts: 2,
    multiSource: false,
    now: new Date(0),
  };
}

function time(name: string, files: number, changed: number, runs: number, fn: () => unknown): Omit<PlanBenchFigure, 'ratioToReference'> {
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < runs + 2; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    fn();
    const dt = performance.now() - t0;
    const dc = process.cpuUsage(c0);
    if (r >= 2) {
      // two warm-up runs
      ms.push(dt);
      cpu.push((dc.user + dc.system) / 1000);
    }
  }
  ms.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const mid = Math.floor(ms.length / 2);
  return { name, files, changed, medianMs: round(ms[mid] ?? NaN), minMs: round(ms[0] ?? NaN), cpuMedianMs: round(cpu[mid] ?? NaN), runs };
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

/** The reference: build each file's `source\0path` key and look it up in the tracked map, nothing else. */
function lookupOnly(input: PlanInput): number {
  let hits = 0;
  for (const f of input.observation.files) if (input.tracked.get(trackedKey(f.source, f.path)) !== undefined) hits += 1;
  return hits;
}

/**
 * Times planSync on `files` unchanged files, with 1% changed, and with the observation unsorted
 * (the planner then sorts it), next to a reference measured in the same run, so a loaded machine
 * shows as a slower reference rather than as a slower planner.
 */
export function runPlanBench(files = 100_000, runs = 9): PlanBenchFigure[] {
  // One input in memory at a time, as in a real process.
  let input = benchInput(files, 0);
  const reference = time('reference: key + Map.get per file', files, 0, runs, () => lookupOnly(input));
  const unchanged = time('plan, all unchanged', files, 0, runs, () => planSync(input));
  input = benchInput(files, files / 100);
  const changed = time('plan, 1% changed', files, files / 100, runs, () => planSync(input));
  input = benchInput(files, 0, true);
  const unsorted = time('plan, all unchanged, unsorted input', files, 0, runs, () => planSync(input));
  return [reference, unchanged, changed, unsorted].map((f) => ({ ...f, ratioToReference: round(f.cpuMedianMs / reference.cpuMedianMs) }));
}
