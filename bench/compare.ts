/**
 * Two (or more) kbsync builds timed against each other and against `rsync -an` on one machine, in
 * the same run: `kbsync plan` (text and --json) on the 100k bench tree, unchanged and with 1% of
 * its files edited before each run, the builds and rsync alternated round by round (the order
 * rotates, so none always runs after another). Each build plans against a state its own code
 * seeded (the schema differs between versions), with the Node it runs on.
 *
 *   npm run build && npx tsc -p tsconfig.bench.json
 *   (in each other checkout too: npm ci, npx tsc -p tsconfig.bench.json)
 *   node .bench-build/bench/compare.js [--runs 15] [--files 100000] [--no-changed] \
 *     old=/tmp/kbsync-old,/usr/bin/node new=.,node_modules/.bin/node
 *
 * Prints, per figure, each build's median and its ratio to rsync's median in the same run, and the
 * median of the per-round ratios between the first build and each other (steadier than a ratio of
 * medians on a shared machine). The load average is printed at the start and the end.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { unusedLoopbackPort, writeConfig } from './cli-runner.js';
import { median, timeProcess } from './measure.js';
import { ensureBenchTree } from './scan-tree.js';

type Build = { label: string; checkout: string; node: string; config: string };
type Timed = { ms: number; cpuMs: number };

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(args[i + 1]);
  args.splice(i, 2);
  return value;
};
const runs = option('--runs', 15);
const files = option('--files', 100_000);
const withChanged = !args.includes('--no-changed');
const specs = args.filter((a) => a.includes('='));
if (specs.length < 1) throw new Error('usage: compare.js [--runs N] [--files N] [--no-changed] label=checkout[,node] ...');

const base = join(tmpdir(), `kbsync-bench-${files}-full`);
const tree = ensureBenchTree(base, files, true);
const work = join(base, 'compare');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
console.log(`tree ${tree.dir} (${files} files); load average at the start: ${load()}`);

const builds: Build[] = [];
let candidates: string[] = [];
for (const spec of specs) {
  const [label, rest] = spec.split('=') as [string, string];
  const [checkout, node] = rest.split(',') as [string, string | undefined];
  const dir = resolve(checkout);
  const nodePath = resolve(node ?? process.execPath);
  const stateDir = join(work, label, 'state');
  const statePath = join(stateDir, 'state.db');
  const list = join(work, label, 'candidates.json');
  mkdirSync(stateDir, { recursive: true });
  // Seeded by the build's own bench code (its schema, its first-sync bookkeeping), on its own Node.
  const seedModule = pathToFileURL(join(dir, '.bench-build', 'bench', 'seed-state.js')).href;
  const script =
    `import { seedSyncedState } from ${JSON.stringify(seedModule)}; import { writeFileSync } from 'node:fs';` +
    `const r = await seedSyncedState(${JSON.stringify(statePath)}, { name: 'bench', path: ${JSON.stringify(tree.dir)}, include: ['**/*'], exclude: [], followSymlinks: false }, ${JSON.stringify(stateDir)});` +
    `writeFileSync(${JSON.stringify(list)}, JSON.stringify(r.files.map((f) => f.absPath)));`;
  const t0 = performance.now();
  const seeded = spawnSync(nodePath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
  if (seeded.status !== 0) throw new Error(`${label}: seeding failed (exit ${seeded.status})`);
  candidates = JSON.parse(readFileSync(list, 'utf8')) as string[];
  console.log(`${label}: ${dir} on ${nodePath}; seeded ${candidates.length} files in ${Math.round(performance.now() - t0)} ms`);
  const config = writeConfig(join(work, label, 'kbsync.yaml'), {
    treeDir: tree.dir,
    statePath,
    target: { kind: 'remote', port: await unusedLoopbackPort() },
  });
  builds.push({ label, checkout: dir, node: nodePath, config });
}
const copy = join(base, 'copy');
spawnSync('rsync', ['-a', '--delete', `${tree.dir}/`, `${copy}/`]);
spawnSync('sync');

/** One command timed from spawn to exit, wall and CPU (user + system, through GNU time). */
function timed(command: string, argv: readonly string[]): Timed {
  const cpuFile = join(work, 'cpu.txt');
  const run = timeProcess('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, command, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (run.status !== 0) throw new Error(`${command} ${argv.join(' ')} exited ${run.status}: ${run.stderr.slice(0, 400)}`);
  const [user, system] = readFileSync(cpuFile, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [NaN, NaN];
  return { ms: run.ms, cpuMs: ((user ?? NaN) + (system ?? NaN)) * 1000 };
}

type Variant = { name: string; run: () => Timed };
const plan = (b: Build, json: boolean): Variant => ({
  name: `${b.label} ${json ? '--json' : 'text'}`,
  run: () => timed(b.node, [join(b.checkout, 'bin', 'kbsync.js'), 'plan', '-c', b.config, ...(json ? ['--json'] : [])]),
});
const rsync: Variant = { name: 'rsync -an', run: () => timed('rsync', ['-an', '--delete', `${tree.dir}/`, `${copy}/`]) };

/** Runs every variant once per round, in an order rotated each round; `before` runs untimed before each. */
function rounds(variants: Variant[], before: () => void = () => {}): Map<string, Timed[]> {
  const out = new Map(variants.map((v) => [v.name, [] as Timed[]]));
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(r + i) % variants.length] as Variant;
      before();
      out.get(v.name)?.push(v.run());
    }
  }
  return out;
}

/** The middle value of `xs` (unrounded). */
const middle = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? Number.NaN;

function report(title: string, results: Map<string, Timed[]>): void {
  console.log(`\n== ${title} (${runs} rounds; load average now ${load()})`);
  const rsyncRuns = results.get(rsync.name) ?? [];
  const ref = median(rsyncRuns.map((t) => t.ms));
  for (const [name, list] of results) {
    const ms = median(list.map((t) => t.ms));
    const cpu = median(list.map((t) => t.cpuMs));
    // On a shared machine the rounds are often bimodal (quiet, busy): the ratio to rsync in the same
    // round, and the fastest run of each, say more than a ratio of medians.
    const ratio =
      ref === null || ms === null
        ? ''
        : `  ${(ms / ref).toFixed(2)} of rsync (per round ${middle(list.map((t, i) => t.ms / (rsyncRuns[i]?.ms ?? Number.NaN))).toFixed(2)})`;
    console.log(
      `${name.padEnd(16)} median ${ms} ms, fastest ${Math.round(Math.min(...list.map((t) => t.ms)))} (cpu ${cpu} ms)${ratio}   runs: ${list.map((t) => Math.round(t.ms)).join(' ')}`,
    );
  }
  const first = builds[0];
  if (first === undefined) return;
  for (const b of builds.slice(1)) {
    for (const kind of ['text', '--json']) {
      const a = results.get(`${first.label} ${kind}`) ?? [];
      const o = results.get(`${b.label} ${kind}`) ?? [];
      console.log(
        `${b.label}/${first.label} ${kind}: median per-round ratio ${middle(o.map((t, i) => t.ms / (a[i]?.ms ?? Number.NaN))).toFixed(3)}`,
      );
    }
  }
}

const all = (): Variant[] => [...builds.flatMap((b) => [plan(b, false), plan(b, true)]), rsync];
for (const v of all()) v.run(); // warm the page cache and each build's first start
report('unchanged tree', rounds(all()));

if (withChanged) {
  const every = Math.max(1, Math.floor(candidates.length / Math.round(files / 100)));
  const changed = candidates.filter((_, i) => i % every === 0).slice(0, Math.round(files / 100));
  const edit = (): void => {
    for (const f of changed) appendFileSync(f, `\nedited for the benchmark ${Date.now()}\n`);
    spawnSync('sync');
  };
  report(`${changed.length} files changed before each run`, rounds(all(), edit));
}
