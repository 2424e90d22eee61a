import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Figure } from './figure.js';
import { info } from './figure.js';
import { hasCommand, ratio, round1 } from './measure.js';
import { kbsyncBin } from './paths.js';
import { emptyFolderConfig } from './daemon-workspace.js';
import { folderCount, SOURCE_NAME, scaleBase, scaleCopy, scaleTree, seededState, TREES, type ScaleTreeSpec } from './scale-tree.js';
import { inotifyWatches } from './watch.js';
import pg from 'pg';
import { startPostgres } from '../test/helpers/postgres-server.js';

type Log = (line: string) => void;
type Opts = { log?: Log };
const GROUP = 'Scale tier';

/** One process run under `/usr/bin/time -v`: wall and CPU time, peak RSS, exit status. */
type Measured = { wallMs: number; cpuMs: number; rssMiB: number; status: number | null; stderr: string };

/** Runs `argv` under `/usr/bin/time -v`, stdout to /dev/null. */
export function measure(argv: string[], env: NodeJS.ProcessEnv = process.env): Measured {
  mkdirSync(scaleBase(), { recursive: true });
  const out = join(scaleBase(), 'time-v.txt');
  rmSync(out, { force: true });
  const t0 = performance.now();
  const res = spawnSync('/usr/bin/time', ['-v', '-o', out, ...argv], { stdio: ['ignore', 'ignore', 'pipe'], env, maxBuffer: 64 << 20 });
  const wallMs = performance.now() - t0;
  const text = existsSync(out) ? readFileSync(out, 'utf8') : '';
  const field = (name: string): number => Number(new RegExp(`${name}: ([\\d.]+)`).exec(text)?.[1] ?? NaN);
  const cpuMs = (field('User time \\(seconds\\)') + field('System time \\(seconds\\)')) * 1000;
  return {
    wallMs: round1(wallMs),
    cpuMs: round1(cpuMs),
    rssMiB: round1(field('Maximum resident set size \\(kbytes\\)') / 1024),
    status: res.status,
    stderr: String(res.stderr).slice(-400),
  };
}

/** Exit 3 is a budget stop: with a run cap of 0 a plan or sync with work left ends so, by design. */
const ran = (m: Measured): boolean => m.status === 0 || m.status === 3;
export const kbsync = (...args: string[]): string[] => [process.execPath, kbsyncBin(), ...args];
export const shell = (line: string): string[] => ['sh', '-c', line];

/** A kbsync.yaml on the embedded target with a run budget of 0 credits (nothing is ever paid). */
export function scaleConfig(work: string, tree: string, extra = ''): { config: string; statePath: string } {
  mkdirSync(work, { recursive: true });
  const statePath = join(work, 'state', 'state.db');
  const config = join(work, 'kbsync.yaml');
  writeFileSync(
    config,
    `target:\n  kind: embedded\n  dataDir: ${JSON.stringify(join(work, 'service'))}\n  plan: enterprise\n` +
      `state: ${JSON.stringify(statePath)}\nbudget: { maxCreditsPerRun: 0 }\n` +
      `sources:\n  - { name: bench, path: ${JSON.stringify(tree)} }\n${extra}`,
  );
  return { config, statePath };
}

export function fresh(name: string): string {
  const dir = join(scaleBase(), 'work', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A figure against a reference: `ok(value, ref)` decides PASS; a failed run or missing tool is a FAIL with its reason. */
function versus(
  name: string,
  ours: Measured,
  ref: Measured | string,
  refName: string,
  target: string,
  ok: (v: number, r: number) => boolean,
): Figure {
  const problem = !ran(ours)
    ? `kbsync exited ${ours.status}: ${ours.stderr}`
    : typeof ref === 'string'
      ? ref
      : ref.status !== 0
        ? `reference exited ${ref.status}: ${ref.stderr}`
        : null;
  const r = typeof ref === 'string' || ref.status !== 0 ? null : ref.wallMs;
  const cpu = `CPU ${ours.cpuMs} ms${typeof ref === 'string' ? '' : ` (reference CPU ${ref.cpuMs} ms)`}; peak RSS ${ours.rssMiB} MiB`;
  return {
    group: GROUP,
    name,
    value: ran(ours) ? ours.wallMs : null,
    unit: 'ms',
    reference: { name: refName, value: r },
    ratio: ratio(ours.wallMs, r),
    target,
    pass: problem === null && r !== null ? ok(ours.wallMs, r) : false,
    note: problem === null ? cpu : `${problem}; ${cpu}`,
  };
}

/** A figure with a fixed limit (no reference). */
export function limit(name: string, value: number | null, unit: string, max: number, problem: string | null = null): Figure {
  const pass = problem === null && value !== null && value <= max;
  return {
    group: GROUP,
    name,
    value,
    unit,
    reference: null,
    ratio: null,
    target: `≤ ${max} ${unit}`,
    pass,
    ...(problem === null ? {} : { note: problem }),
  };
}

/** A figure that could not be measured: a FAIL with the reason, so the run shows it. */
export function notMeasured(name: string, reason: string): Figure {
  return { group: GROUP, name, value: null, unit: 'ms', reference: null, ratio: null, target: 'measured', pass: false, note: reason };
}

const sha256Line = (tree: string): string => `find '${tree}' -type f -print0 | xargs -0 -P2 sha256sum > /dev/null`;

/** 1. Cold plan (empty state) at 1M and 20k beside `find | xargs -P2 sha256sum` over the same files. */
export async function coldPlan(o: Opts): Promise<Figure[]> {
  const log = o.log ?? (() => {});
  const figures: Figure[] = [];
  for (const spec of [TREES.m1, TREES.k20]) {
    const tree = scaleTree(spec, log);
    const ref = measure(shell(sha256Line(tree)));
    const { config } = scaleConfig(fresh(`cold-${spec.key}`), tree);
    const ours = measure(kbsync('plan', '-c', config, '--json'));
    log(`cold ${spec.key}: kbsync ${ours.wallMs} ms (CPU ${ours.cpuMs}), sha256sum ${ref.wallMs} ms (CPU ${ref.cpuMs})`);
    figures.push(
      versus(
        `cold plan --json, ${label(spec)} (empty state)`,
        ours,
        ref,
        'find | xargs -0 -P2 sha256sum',
        '≤ 1.2 × reference',
        (v, r) => v <= 1.2 * r,
      ),
    );
  }
  return figures;
}

/** The tree's size in a figure's name; a tree given by env is named by its path, being of unknown size. */
export function label(spec: ScaleTreeSpec): string {
  const given = process.env[`KBSYNC_SCALE_TREE_${spec.key.toUpperCase()}`];
  const files = `${(spec.folders * spec.perFolder).toLocaleString('en')} files`;
  return given === undefined || given === '' ? files : `${files} (tree ${given})`;
}

/** Starts two busy loops (a machine twice as slow); returns their stop. */
function busy(): () => void {
  const loops: ChildProcess[] = [0, 1].map(() => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  return () => loops.forEach((p) => p.kill('SIGKILL'));
}

/** 2. Unchanged plan (state seeded as synced) at 1M and 100k beside `rsync -an` to an identical copy; then with two busy processes beside. */
export async function unchangedPlan(o: Opts): Promise<Figure[]> {
  const log = o.log ?? (() => {});
  const figures: Figure[] = [];
  for (const spec of [TREES.m1, TREES.k100]) {
    const tree = scaleTree(spec, log);
    const { config, statePath } = scaleConfig(fresh(`unchanged-${spec.key}`), tree);
    await seededState(spec, tree, statePath, log);
    const rsync = hasCommand('rsync')
      ? (): Measured => measure(shell(`rsync -an --delete '${tree}/' '${scaleCopy(spec, tree)}/' > /dev/null`))
      : () => 'rsync is not installed (apt-get install -y rsync)';
    for (const loaded of [false, true]) {
      const stop = loaded ? busy() : () => {};
      try {
        const ref = rsync();
        const ours = measure(kbsync('plan', '-c', config, '--json'));
        log(
          `unchanged ${spec.key}${loaded ? ' (2 busy)' : ''}: kbsync ${ours.wallMs} ms, rsync ${typeof ref === 'string' ? ref : ref.wallMs} ms`,
        );
        const name = `unchanged plan --json, ${label(spec)}${loaded ? ', two busy processes beside' : ''}`;
        figures.push(versus(name, ours, ref, 'rsync -an (identical copy)', 'below the reference', (v, r) => v < r));
      } finally {
        stop();
      }
    }
  }
  return figures;
}

/** 3 and 4. Peak RSS of plan, plan --json, sync (run cap 0), status and status --json at 1M; the seeded state's bytes per tracked file. */
export async function memoryAndState(o: Opts): Promise<Figure[]> {
  const log = o.log ?? (() => {});
  const tree = scaleTree(TREES.m1, log);
  const { config, statePath } = scaleConfig(fresh('rss-m1'), tree);
  const tracked = await seededState(TREES.m1, tree, statePath, log);
  const size = (p: string): number => (existsSync(p) ? statSync(p).size : 0);
  const bytes = size(statePath) + size(`${statePath}-wal`);
  const figures: Figure[] = [
    limit(`state size per tracked file (${tracked} files, seeded)`, round1(bytes / Math.max(1, tracked)), 'bytes', 250),
  ];
  const commands: [string, string[]][] = [
    ['plan', ['plan']],
    ['plan --json', ['plan', '--json']],
    ['sync (run cap 0)', ['sync']],
    ['status', ['status']],
    ['status --json', ['status', '--json']],
  ];
  for (const [name, args] of commands) {
    const m = measure(kbsync(...args, '-c', config));
    log(`${name}: peak RSS ${m.rssMiB} MiB, exit ${m.status}, ${m.wallMs} ms`);
    const problem = ran(m) ? null : `exited ${m.status}: ${m.stderr}`;
    figures.push(limit(`peak RSS of kbsync ${name}, ${label(TREES.m1)}`, m.rssMiB, 'MiB', 500, problem));
  }
  return figures;
}

export function vmKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : Number(m[1]);
  } catch {
    return null;
  }
}

/** Waits until the daemon's status file says ready (as bench/watch-daemon.ts does); its ms, or the problem. */
async function untilReady(child: ChildProcess, statusPath: string, t0: number, stderr: () => string): Promise<number | string> {
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return `kbsync watch exited ${child.exitCode}: ${stderr().slice(-400)}`;
    try {
      const s = JSON.parse(readFileSync(statusPath, 'utf8')) as { pid: number; ready: boolean };
      if (s.pid === child.pid && s.ready) return round1(performance.now() - t0);
    } catch {
      // Not written yet, or caught mid-write.
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return 'not ready within 600 s';
}

/** 5. kbsync watch on the 1M tree: ready time, RSS, inotify watches == folders; the daemon-answered plan beside an empty folder's. */
export async function daemon(o: Opts): Promise<Figure[]> {
  const log = o.log ?? (() => {});
  const tree = scaleTree(TREES.m1, log);
  const work = fresh('daemon-m1');
  // A long debounce: the page written below is still waiting for its cycle when plan is asked.
  const { config, statePath } = scaleConfig(work, tree, 'watch: { debounceMs: 60000, rescanMinutes: 60 }\n');
  await seededState(TREES.m1, tree, statePath, log);
  const empty = await emptyFolderConfig(work, { name: SOURCE_NAME, path: tree, include: ['**/*'], exclude: [], followSymlinks: false });
  const folders = folderCount(tree);
  const t0 = performance.now();
  const child = spawn(process.execPath, [kbsyncBin(), 'watch', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
  try {
    const ready = await untilReady(child, `${statePath}.watch.json`, t0, () => err);
    const pid = child.pid as number;
    const problem = typeof ready === 'string' ? ready : null;
    const watches = problem === null ? inotifyWatches(pid) : null;
    const rss = problem === null ? vmKb(pid, 'VmHWM') : null;
    const figures = [
      limit(`kbsync watch, ${label(TREES.m1)}: spawn to ready`, typeof ready === 'number' ? ready : null, 'ms', 20_000, problem),
      limit('kbsync watch: peak RSS when ready', rss === null ? null : round1(rss / 1024), 'MiB', 1024, problem),
      // The daemon also watches its config's folder (for the editor's atomic save of the config), outside the tree.
      {
        ...info(GROUP, 'kbsync watch: inotify watches', watches, 'watches', undefined, {
          name: "folders in the tree, and the config's folder",
          value: folders + 1,
        }),
        target: '= folders + 1',
        pass: watches === folders + 1,
      },
    ];
    // The daemon answers from a cache while no event came since its last answer; the first answer after
    // ready (as any after a change) walks the tree over the kept index. Both count, each on its own line.
    const [walked, cached] = [0, 1].map(() => measure(kbsync('plan', '-c', config))) as [Measured, Measured];
    // A page written in one folder: the answer walks that folder, the rest as the last walk found it.
    const page = join(tree, readdirSync(tree).sort()[0] as string, `bench-new-${process.pid}.md`);
    writeFileSync(page, '# A page written a moment ago\n');
    await new Promise((r) => setTimeout(r, 500));
    const changed = measure(kbsync('plan', '-c', config));
    rmSync(page);
    const emptyPlan = measure(kbsync('plan', '-c', empty));
    const listed = measure(kbsync('plan', '-c', config, '--json'));
    log(
      `daemon: ready ${String(ready)}, RSS ${rss} kB, ${watches} watches / ${folders} folders; plan ${walked.wallMs} ms, then ${cached.wallMs} ms, after a change ${changed.wallMs} ms, vs empty ${emptyPlan.wallMs} ms; plan --json ${listed.wallMs} ms`,
    );
    const answered = (name: string, m: Measured): Figure =>
      versus(
        `kbsync plan answered by the daemon, ${label(TREES.m1)}, ${name}`,
        m,
        emptyPlan,
        'plan of an empty folder',
        '≤ 1.5 × reference',
        (v, r) => v <= 1.5 * r,
      );
    const first = answered('the first answer after ready (a walk of the whole tree over the kept index)', walked);
    first.note = `${first.note ?? ''}; plan --json (every file listed) ${listed.wallMs} ms`;
    figures.push(
      first,
      answered('after a page is written in one folder (that folder walked, the rest from the last walk)', changed),
      answered('nothing changed since its last answer (its cache)', cached),
    );
    return figures;
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * 6. The unchanged plan at 1M on a PostgreSQL state (the seeded SQLite state brought over by `kbsync
 * state migrate`, a durable local server) beside the same plan on the SQLite state; its peak RSS.
 * The two plans alternate, twice each; each side's faster run counts.
 */
export async function pgState(o: Opts): Promise<Figure[]> {
  const log = o.log ?? (() => {});
  const tree = scaleTree(TREES.m1, log);
  const work = fresh('pg-m1');
  const { config, statePath } = scaleConfig(work, tree);
  await seededState(TREES.m1, tree, statePath, log);
  const server = await startPostgres({ durable: true });
  try {
    const admin = new pg.Client({ connectionString: `${server.url}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE m1');
    await admin.end();
    const url = `${server.url}/m1`;
    log('migrating the seeded state into PostgreSQL');
    const migrated = measure(kbsync('state', 'migrate', '-c', config, '--to', url));
    const name = `unchanged plan, ${label(TREES.m1)}, PostgreSQL state`;
    const rssName = `peak RSS of kbsync plan, ${label(TREES.m1)}, PostgreSQL state`;
    if (migrated.status !== 0) {
      const why = `kbsync state migrate exited ${migrated.status}: ${migrated.stderr}`;
      return [notMeasured(name, why), limit(rssName, null, 'MiB', 500, why)];
    }
    log(`migrated in ${migrated.wallMs} ms`);
    const pgConfig = join(work, 'kbsync-pg.yaml');
    writeFileSync(pgConfig, readFileSync(config, 'utf8').replace(/^state: .*$/m, `state: ${JSON.stringify(url)}`));
    const best = (a: Measured | null, b: Measured): Measured => (a === null || (ran(b) && b.wallMs < a.wallMs) ? b : a);
    let sqlite: Measured | null = null;
    let postgres: Measured | null = null;
    for (let round = 0; round < 2; round++) {
      sqlite = best(sqlite, measure(kbsync('plan', '-c', config)));
      postgres = best(postgres, measure(kbsync('plan', '-c', pgConfig)));
      log(`pg round ${round}: sqlite ${sqlite.wallMs} ms, postgres ${postgres.wallMs} ms (${postgres.rssMiB} MiB)`);
    }
    const [s, p] = [sqlite as Measured, postgres as Measured];
    return [
      versus(name, p, s, 'the same plan on the SQLite state', '≤ 2 × reference', (v, r) => v <= 2 * r),
      limit(rssName, ran(p) ? p.rssMiB : null, 'MiB', 500, ran(p) ? null : `exited ${p.status}: ${p.stderr}`),
    ];
  } finally {
    await server.stop();
  }
}
