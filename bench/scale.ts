/**
 * `npm run bench -- --scale`: the scale tier (1M, 100k and 20k files), each figure group in a fresh
 * process (bench/child.ts) beside its reference, written into the "Scale tier" section of
 * docs/benchmarks.md (bench/scale-report.ts) without touching the normal tier's figures.
 * `--scale` runs every group but the first sync; `--scale=all` adds it; `--scale=cold,daemon` picks groups.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Figure } from './figure.js';
import { currentLoad, machineFacts } from './machine.js';
import { repoRoot } from './paths.js';
import { figureLine } from './report.js';
import { notMeasured } from './scale-figures.js';
import { renderScaleSection, withScaleSection, type ScaleRun } from './scale-report.js';
import { scaleBase } from './scale-tree.js';

/** Each group: its name on the command line, its function (in scale-figures.js unless `module` says), and what it covers. */
const GROUPS = [
  { key: 'unchanged', fn: 'unchangedPlan', label: 'unchanged plan at 1M and 100k' },
  { key: 'memory', fn: 'memoryAndState', label: 'peak RSS and state size at 1M' },
  { key: 'daemon', fn: 'daemon', label: 'kbsync watch at 1M' },
  { key: 'cold', fn: 'coldPlan', label: 'cold plan at 1M and 20k' },
  { key: 'pg', fn: 'pgState', label: 'unchanged plan at 1M on a PostgreSQL state' },
  { key: 'service', module: './scale-service.js', fn: 'localService', label: 'the local service at 1M: GET /files/ pages, kbsync audit' },
  { key: 'firstsync', module: './first-sync.js', fn: 'firstSync', label: 'first sync at 1M; kill -9 at 100k' },
] as const;

function chosen(arg: string): (typeof GROUPS)[number][] {
  const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : '';
  if (value === '') return GROUPS.filter((g) => g.key !== 'firstsync');
  if (value === 'all') return [...GROUPS];
  const keys = value.split(',');
  return GROUPS.filter((g) => keys.includes(g.key));
}

export async function runScaleTier(arg: string): Promise<number> {
  const started = performance.now();
  const machine = machineFacts();
  const figures: Figure[] = [];
  const child = fileURLToPath(new URL('./child.js', import.meta.url));
  for (const group of chosen(arg)) {
    console.log(`\n== scale: ${group.label}`);
    const groupStarted = performance.now();
    const groupMachine = machineFacts();
    const res = spawnSync(process.execPath, [child, 'module' in group ? group.module : './scale-figures.js', group.fn, '{}'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    const list =
      res.status === 0
        ? (JSON.parse(res.stdout) as Figure[])
        : [notMeasured(`${group.label}: every figure`, `the benchmark process failed (exit ${res.status ?? res.signal})`)];
    for (const f of list) console.log(`  ${figureLine(f)}`);
    figures.push(...list);
    // Written after each group, so that a run stopped part way keeps what it measured.
    groupMachine.loadAfter = currentLoad();
    const durationS = Math.round((performance.now() - groupStarted) / 1000);
    writeGroup({ key: group.key, label: group.label, command: `npm run bench -- ${arg}`, machine: groupMachine, durationS, figures: list });
  }
  console.log(`scale tier: ${Math.round((performance.now() - started) / 1000)} s on ${machine.cpus} × ${machine.cpuModel}`);
  const missed = figures.filter((f) => f.target !== null && f.pass !== true);
  console.log(
    `\nwrote the scale tier into docs/benchmarks.md; ${missed.length === 0 ? 'every target met' : `${missed.length} target(s) missed or not measured`}`,
  );
  return missed.length === 0 ? 0 : 1;
}

/** Where each group's last run is kept, so that a run of some groups leaves the others' figures in the section. */
const RUNS_FILE = join(repoRoot(), 'docs', 'benchmarks-scale.json');

/** Keeps `run` as its group's last, and writes the scale section of docs/benchmarks.md from every group's last run. */
function writeGroup(run: ScaleRun): void {
  const kept = existsSync(RUNS_FILE) ? (JSON.parse(readFileSync(RUNS_FILE, 'utf8')) as Record<string, ScaleRun>) : {};
  kept[run.key] = run;
  writeFileSync(RUNS_FILE, `${JSON.stringify(kept, null, 2)}\n`);
  const runs = GROUPS.flatMap((g) => (kept[g.key] === undefined ? [] : [kept[g.key] as ScaleRun]));
  const out = join(repoRoot(), 'docs', 'benchmarks.md');
  const section = renderScaleSection(runs, scaleBase());
  writeFileSync(out, withScaleSection(existsSync(out) ? readFileSync(out, 'utf8') : '# Benchmarks\n', section));
}
