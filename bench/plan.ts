import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { createHash } from 'node:crypto';
import { planSync } from '../src/sync/planner/plan-sync.js';
import { trackedKey } from '../src/sync/planner/keys.js';
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

/** A 100k-file tree (files spread over nested folders), tracked and observed; `changed` of them with new content. */
function benchInput(files: number, changed: number): PlanInput {
  const observed: ObservedFile[] = [];
  const tracked = new Map<string, TrackedFile>();
  for (let i = 0; i < files; i++) {
    const path = `dir${i % 100}/sub${(i >> 7) % 50}/file-${i}.md`;
    const hash = sha(i);
    observed.push({ source: 'docs', path, absPath: `/data/${path}`, size: 2000 + (i % 5000), mtimeNs: `17000000000${i}`, inode: i, sha256: i % Math.max(1, Math.floor(files / Math.max(1, changed))) === 0 && changed > 0 ? sha(-i - 1) : hash });
    tracked.set(trackedKey('docs', path), {
      source: 'docs', path, size: 2000 + (i % 5000), mtimeNs: `17000000000${i}`, inode: i, sha256: hash,
      remoteName: path, remoteId: String(i + 1), remoteStatus: 'processed', reprocessAttempts: 0,
      lastAction: 'upload', lastReason: 'new file', updatedAt: '2024-01-01T00:00:00.000Z',
    });
  }
  observed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    observation: { files: observed, skipped: [], sources: [{ name: 'docs', kind: 'folder', root: '/data', commit: null }] },
    tracked, remote: null, plan: 'pro', limits: { maxFileBytes: null },
    budget: { caps: { run: 1e9, day: 1e9, month: 1e9 }, used: { run: 0, day: 0, month: 0 } },
    reindexMinChangedFiles: 20, maxReprocessAttempts: 2, multiSource: false, now: new Date(0),
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

/** The floor any planner keyed by `source\0path` pays: build each file's key and look it up in the tracked map. */
function lookupOnly(input: PlanInput): number {
  let hits = 0;
  for (const f of input.observation.files) if (input.tracked.get(trackedKey(f.source, f.path)) !== undefined) hits += 1;
  return hits;
}

/**
 * Times planSync on `files` unchanged files and with 1% changed, next to a reference measured in
 * the same run (key + tracked-map lookup per file, nothing else), so a loaded machine shows as a
 * slower reference rather than a slower planner.
 */
export function runPlanBench(files = 100_000, runs = 9): PlanBenchFigure[] {
  const unchanged = benchInput(files, 0);
  const changed = benchInput(files, files / 100);
  const reference = time('reference: key + Map.get per file', files, 0, runs, () => lookupOnly(unchanged));
  const figures = [
    reference,
    time('plan, all unchanged', files, 0, runs, () => planSync(unchanged)),
    time('plan, 1% changed', files, files / 100, runs, () => planSync(changed)),
  ];
  return figures.map((f) => ({ ...f, ratioToReference: round(f.cpuMedianMs / reference.cpuMedianMs) }));
}
