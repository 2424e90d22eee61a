import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openState } from '../src/sync/state/index.js';
import type { Figure } from './figure.js';
import { info } from './figure.js';
import { round1 } from './measure.js';
import { kbsyncBin } from './paths.js';
import { fresh, label, limit, vmKb } from './scale-figures.js';
import { scaleTree, TREES, type ScaleTreeSpec } from './scale-tree.js';
import { meteredConfig, serviceFacts, startMetered, treeCredits } from './metered-service.js';

/**
 * The scale tier's first sync (bench/scale-figures.ts's firstSync): `kbsync sync` of a whole tree against the
 * local service with its background work off (it charges, stores and answers each upload at once), watched
 * on a terminal (RSS each second, its output lines, the progress bar); and the same SIGKILLed again and again.
 */

type Log = (line: string) => void;
const GROUP = 'Scale tier';

/** One watched `kbsync sync`: its exit, RSS each second, its log output by kind, what its progress bar said. */
type SyncWatch = {
  status: number | null;
  signal: string | null;
  wallMs: number;
  /** VmRSS in KiB, one a second from the start. */
  rss: number[];
  hwmKb: number | null;
  /** Lines of log output (JSON log lines and `kbsync:` notes), the bar's redraws not counted. */
  logLines: number;
  /** Of them, lines that name a file (`path`): per-file failures and warnings. */
  fileLines: number;
  /** The most frequent log messages, with their counts. */
  topMessages: string;
  /** Lines of the text report on stdout, and of them the failed items' (per-file failures). */
  reportLines: number;
  reportFailures: number;
  /** Bar redraws seen, and whether one during the upload phase carried an ETA. */
  barDraws: number;
  uploadEta: string | null;
};

/** The process under `root` (itself or a descendant) whose command line runs kbsync.js. */
function kbsyncPid(root: number): number | null {
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    try {
      // An argument that is kbsync.js itself: `script -c '… kbsync.js …'` only mentions it.
      if (
        readFileSync(`/proc/${pid}/cmdline`, 'utf8')
          .split('\0')
          .some((a) => a.endsWith('/kbsync.js'))
      )
        return pid;
      for (const t of readdirSync(`/proc/${pid}/task`))
        queue.push(
          ...readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8')
            .split(' ')
            .filter((x) => x !== '')
            .map(Number),
        );
    } catch {
      // Gone already.
    }
  }
  return null;
}

/**
 * Runs `kbsync sync -c config` with KBSYNC_LOG_LEVEL=info and JSON log lines, stdout (the report) to a file.
 * `tty`: under `script`, so that stderr is a terminal and the progress bar is drawn. `killAfterMs`: SIGKILLed then.
 */
async function watchedSync(config: string, work: string, o: { tty: boolean; killAfterMs?: number; log: Log }): Promise<SyncWatch> {
  const report = join(work, 'report.txt');
  const env = { ...process.env, KBSYNC_LOG_LEVEL: 'info', KBSYNC_LOG_FORMAT: 'json' };
  const argv = [process.execPath, kbsyncBin(), 'sync', '-c', config];
  const quoted = argv.map((a) => `'${a}'`).join(' ');
  const t0 = performance.now();
  const out = openSync(report, 'w');
  const child = o.tty
    ? spawn('script', ['-qfec', `stty cols 120 2>/dev/null; exec ${quoted} > '${report}'`, '/dev/null'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env,
      })
    : spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', out, 'pipe'], env });
  closeSync(out);
  const w: SyncWatch = {
    status: null,
    signal: null,
    wallMs: 0,
    rss: [],
    hwmKb: null,
    logLines: 0,
    fileLines: 0,
    topMessages: '',
    reportLines: 0,
    reportFailures: 0,
    barDraws: 0,
    uploadEta: null,
  };
  const messages = new Map<string, number>();
  let rest = '';
  const onLine = (raw: string): void => {
    const line = raw.replace(/\x1b\[K/g, '');
    for (const seg of line.split('\r'))
      if (/^(hashing|uploading|writing|waiting) +\[/.test(seg)) {
        w.barDraws++;
        if (seg.startsWith('uploading') && seg.includes(' ETA ')) w.uploadEta ??= seg.trim();
      }
    const json = line.indexOf('{"level"');
    const last = line.split('\r').pop() ?? '';
    const text = json >= 0 ? line.slice(json) : /^(hashing|uploading|writing|waiting) +\[/.test(last) ? '' : last.trim();
    if (text === '') return;
    w.logLines++;
    let msg = text.slice(0, 80);
    if (json >= 0)
      try {
        const rec = JSON.parse(text) as { msg?: string; path?: string };
        msg = rec.msg ?? msg;
        if (rec.path !== undefined) w.fileLines++;
      } catch {
        // A line cut by the kill.
      }
    messages.set(msg, (messages.get(msg) ?? 0) + 1);
  };
  const stream = o.tty ? child.stdout : child.stderr;
  stream?.on('data', (c: Buffer) => {
    const lines = (rest + c.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) onLine(l);
  });
  // The bar's redraws never end in a newline: keep only the tail of what follows the last one.
  const exited = new Promise<void>((resolve) => child.once('exit', (code, signal) => ((w.status = code), (w.signal = signal), resolve())));
  let pid: number | null = null;
  let killed = false;
  const tick = setInterval(() => {
    pid ??= kbsyncPid(child.pid as number);
    if (pid === null) return;
    const kb = vmKb(pid, 'VmRSS');
    if (kb !== null) w.rss.push(kb);
    w.hwmKb = vmKb(pid, 'VmHWM') ?? w.hwmKb;
    if (rest.length > 1 << 16) rest = rest.slice(-4096);
  }, 1000);
  const killer =
    o.killAfterMs === undefined
      ? null
      : setTimeout(() => {
          pid ??= kbsyncPid(child.pid as number);
          if (pid !== null) {
            killed = true;
            process.kill(pid, 'SIGKILL');
          }
        }, o.killAfterMs);
  await exited;
  clearInterval(tick);
  if (killer !== null) clearTimeout(killer);
  if (rest !== '') onLine(rest);
  if (killed) w.signal = 'SIGKILL';
  for (const l of readFileSync(report, 'utf8').split('\n')) {
    if (l === '') continue;
    w.reportLines++;
    if (l.startsWith('failed')) w.reportFailures++;
  }
  w.wallMs = round1(performance.now() - t0);
  w.topMessages = [...messages.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([m, n]) => `${n}× ${m}`)
    .join('; ');
  return w;
}

/** kbsync's own ledger: credits spent and still reserved. */
function kbsyncLedger(statePath: string): { spent: number; reserved: number } {
  const state = openState(statePath, { lock: false });
  try {
    const { spent, reserved } = state.ledgerTotals().all;
    return { spent, reserved };
  } finally {
    state.close();
  }
}

const MiB = (kb: number | null): number | null => (kb === null ? null : round1(kb / 1024));

/** Most MiB RSS may grow after the first minute of a first sync (the GC's swings, not a leak). */
const RSS_GROWTH_MIB = 64;

/** The first sync's figures from one watched run of `files` files. */
function firstSyncFigures(name: string, w: SyncWatch, files: number, facts: ReturnType<typeof serviceFacts>, credits: number): Figure[] {
  const problem = w.status === 0 ? null : `kbsync sync exited ${w.status ?? w.signal}`;
  const atMinute = w.rss[Math.min(59, w.rss.length - 1)] ?? null;
  const after = w.rss.slice(60);
  const growth = atMinute === null || after.length === 0 ? null : round1((Math.max(...after) - atMinute) / 1024);
  const seconds = w.wallMs / 1000;
  const perSecond = round1((w.logLines - w.fileLines + w.reportLines - w.reportFailures) / Math.max(1, seconds));
  const rssNote = `RSS at 1 min ${MiB(atMinute)} MiB, at the end ${MiB(w.rss.at(-1) ?? null)} MiB, peak ${MiB(w.hwmKb)} MiB; ${w.rss.length} samples`;
  const paid = facts.files === files && facts.duplicates === 0 && facts.charged === credits;
  return [
    { ...limit(`${name}: RSS growth after the first minute`, growth, 'MiB', RSS_GROWTH_MIB, problem), note: rssNote },
    {
      ...limit(`${name}: lines of output a second (log and report), per-file failures aside`, perSecond, 'lines/s', 1, problem),
      note:
        `${w.logLines} log lines (${w.fileLines} naming a file) and ${w.reportLines} report lines (${w.reportFailures} failures) in ${round1(seconds)} s; ` +
        `most frequent log lines: ${w.topMessages || 'none'}`,
    },
    {
      ...info(GROUP, `${name}: progress bar with an ETA while uploading`, w.barDraws, 'redraws'),
      target: 'an ETA shown',
      pass: w.uploadEta !== null,
      note: w.uploadEta ?? 'no upload redraw carried an ETA',
    },
    {
      ...info(GROUP, `${name}: wall time`, round1(seconds), 's'),
      target: "every file uploaded once, credits == files' credits",
      pass: problem === null && paid,
      note: `${facts.files} uploads for ${files} files (${facts.duplicates} duplicates), ${facts.charged} credits charged for ${credits}`,
    },
  ];
}

/** A first sync of `spec`'s tree against the metered service, watched on a terminal. */
async function firstSyncRun(spec: ScaleTreeSpec, label: string, log: Log): Promise<Figure[]> {
  const tree = scaleTree(spec, log);
  const { files, credits } = treeCredits(tree);
  const work = fresh(`first-${spec.key}`);
  const svc = await startMetered(join(work, 'service'), credits, 'basic');
  try {
    const { config } = meteredConfig(work, tree, svc, credits, 'basic');
    const w = await watchedSync(config, work, { tty: true, log });
    await svc.stop();
    const facts = serviceFacts(svc.dataDir);
    log(
      `first sync ${spec.key}: exit ${w.status}, ${w.wallMs} ms, ${w.logLines} log lines, peak ${MiB(w.hwmKb)} MiB, RSS/10s ${w.rss
        .filter((_, i) => i % 10 === 0)
        .map((k) => Math.round(k / 1024))
        .join(' ')}`,
    );
    return firstSyncFigures(`first sync, ${label}, metered local service`, w, files, facts, credits);
  } finally {
    await svc.stop();
  }
}

/** Kills landed per run, seeded: the moments (ms after the start) of the 10 SIGKILLs. */
function killMoments(n: number, seed: number, maxMs: number): number[] {
  let x = seed;
  const random = (): number => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: n }, () => Math.round(2000 + random() * (maxMs - 2000)));
}

/** A first sync of `spec`'s tree SIGKILLed at 10 seeded moments, each time run again; then run to its end. */
async function killedFirstSync(spec: ScaleTreeSpec, label: string, log: Log): Promise<Figure[]> {
  const tree = scaleTree(spec, log);
  const { files, credits } = treeCredits(tree);
  const work = fresh(`kill-${spec.key}`);
  const svc = await startMetered(join(work, 'service'), credits * 2, 'basic');
  const name = `first sync, ${label}, SIGKILLed at 10 moments then run to its end`;
  try {
    const { config, statePath } = meteredConfig(work, tree, svc, credits * 2, 'basic');
    const moments = killMoments(10, 20_261_203, 90_000);
    let landed = 0;
    for (const at of moments) {
      const w = await watchedSync(config, work, { tty: false, killAfterMs: at, log });
      if (w.signal === 'SIGKILL') landed++;
      log(`kill at ${at} ms: ${w.signal ?? `exit ${w.status}`} after ${w.wallMs} ms`);
    }
    const last = await watchedSync(config, work, { tty: false, log });
    const ledger = kbsyncLedger(statePath);
    await svc.stop();
    const facts = serviceFacts(svc.dataDir);
    log(`killed ${spec.key}: ${landed} kills landed; last exit ${last.status}; ${JSON.stringify(facts)}; ledger ${JSON.stringify(ledger)}`);
    const problem = last.status === 0 ? null : `the last run exited ${last.status ?? last.signal}`;
    return [
      {
        ...info(GROUP, name, facts.files, 'uploads', undefined, { name: 'files in the tree', value: files }),
        target: 'each file once; charged == credits of the files == kbsync ledger',
        pass:
          problem === null &&
          landed === moments.length &&
          facts.files === files &&
          facts.duplicates === 0 &&
          facts.charged === credits &&
          ledger.spent === credits &&
          ledger.reserved === 0,
        note:
          `${landed}/${moments.length} kills landed (at ${moments.map((m) => round1(m / 1000)).join(', ')} s); ${facts.duplicates} duplicate uploads; ` +
          `${facts.charged} credits charged for ${credits}; kbsync ledger spent ${ledger.spent}, reserved ${ledger.reserved}${problem === null ? '' : `; ${problem}`}`,
      },
    ];
  } finally {
    await svc.stop();
  }
}

/**
 * 8. The first sync of the 1M tree (KBSYNC_SCALE_FIRST=k100 for the 100k one) against the local service with
 * its background work off, on a terminal; then the 100k tree's first sync SIGKILLed at 10 moments.
 */
export async function firstSync(o: { log?: Log; only?: 'first' | 'kill' }): Promise<Figure[]> {
  const log = o.log ?? (() => {});
  const spec = process.env.KBSYNC_SCALE_FIRST === 'k100' ? TREES.k100 : TREES.m1;
  return [
    ...(o.only === 'kill' ? [] : await firstSyncRun(spec, label(spec), log)),
    ...(o.only === 'first' ? [] : await killedFirstSync(TREES.k100, label(TREES.k100), log)),
  ];
}
