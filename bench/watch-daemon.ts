import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { round1 } from './measure.js';
import { kbsyncBin } from './paths.js';
import { benchTreeOf, timeBareWalk } from './scan-tree.js';
import { seededDaemonWorkspace } from './daemon-workspace.js';
import { measureIdle, type IdleSample } from './idle.js';
import { inotifyWatches } from './watch.js';
import { measureChanges, measureRescans } from './watch-latency.js';

/**
 * `kbsync watch` itself on the bench tree, seeded as synced (embedded target, default watcher): time from
 * spawn until its status file says ready (the watchers started, the first sync of the unchanged tree
 * done), the daemon's RSS then and its peak (VmHWM), and its inotify watches; beside the bare
 * readdirSync + lstatSync walk of the same tree, measured in this process just before. Then, the daemon
 * left running: CHANGES new files written one at a time, each timed until its op is in the outbox; and
 * RESCANS cycles of the rescan timer alone (the unchanged tree), each one's duration as the daemon logs it.
 * Last, the daemon idle (its config edited to rescan hourly, reloaded live): its wake-ups (context switches of its threads) and CPU.
 */
export type WatchDaemonResult = {
  files: number;
  folders: number;
  bareWalkMs: number | null;
  /** Spawn until the watchers are started (the daemon's `watching` log line), before the first sync ends. */
  watchingMs: number | null;
  readyMs: number | null;
  rssReadyMb: number | null;
  rssPeakMb: number | null;
  inotifyWatches: number | null;
  /** watch.debounceMs of the daemon (set in its config). */
  debounceMs: number;
  /** Write of a new file until its op's created_at in the outbox, one per change. */
  changeToOutboxMs: number[];
  /** Write until this process saw the op (1 ms poll of the state, read-only), one per change. */
  changeSeenMs: number[];
  /** tookMs of the sync cycle each change ran (the whole tree walked and planned). */
  changeCycleMs: (number | null)[];
  /** tookMs of each cycle run by the rescan timer alone, the tree unchanged. */
  rescanMs: number[];
  /** The daemon idle (no cycle due): wake-ups and CPU. */
  idle: IdleSample | null;
  problem: string | null;
  /** Why the change or rescan figures are missing or short. */
  latencyProblem: string | null;
};

/** The daemon's watch settings in this bench: the default debounce (named), a rescan every 6 s. */
export const DAEMON_DEBOUNCE_MS = 1500;
const RESCAN_MINUTES = 0.1;
const CHANGES = 5;
/**
 * The idle window: once the rescans are measured, the config is edited to rescan hourly (a reload, no
 * restart); the window starts IDLE_AFTER_MS after the last cycle and lasts IDLE_MS, no cycle due. The
 * wait outlasts what a full cycle leaves behind: V8's memory reducer collects about 8 s after it.
 */
const IDLE_AFTER_MS = 20_000;
const IDLE_MS = 20_000;
const RESCANS = 3;

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : Number(m[1]);
  } catch {
    return null;
  }
}

export async function runWatchDaemonBench(options: {
  files?: number;
  full?: boolean;
  dir?: string;
  /** watch.watcher of the daemon; the default when unset. */
  watcher?: string;
  log?: (line: string) => void;
}): Promise<WatchDaemonResult> {
  const log = options.log ?? (() => {});
  const { base, tree } = benchTreeOf(options);
  const { work, statePath, config } = await seededDaemonWorkspace({
    base,
    name: 'watch',
    treeDir: tree.dir,
    watch: {
      debounceMs: DAEMON_DEBOUNCE_MS,
      rescanMinutes: RESCAN_MINUTES,
      ...(options.watcher === undefined ? {} : { watcher: options.watcher }),
    },
    log,
  });

  const counts = timeBareWalk(tree.dir);

  const statusPath = `${statePath}.watch.json`;
  const t0 = performance.now();
  const spawnedAtMs = Date.now();
  const child = spawn(process.execPath, [kbsyncBin(), 'watch', '-c', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, KBSYNC_LOG_LEVEL: 'info' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const pid = child.pid as number;
  let readyMs: number | null = null;
  let problem: string | null = null;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) {
      problem = `kbsync watch exited ${child.exitCode}: ${stderr.slice(0, 400)}`;
      break;
    }
    if (existsSync(statusPath)) {
      try {
        const s = JSON.parse(readFileSync(statusPath, 'utf8')) as { pid: number; ready: boolean; lastError: { message: string } | null };
        if (s.pid === pid && s.ready) {
          readyMs = round1(performance.now() - t0);
          break;
        }
        if (s.pid === pid && s.lastError !== null) problem = `the first sync failed: ${s.lastError.message}`;
      } catch {
        // Caught mid-write: read again.
      }
    }
    if (Date.now() > deadline) {
      problem ??= 'not ready within 120 s';
      break;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const rssReady = statusKb(pid, 'VmRSS');
  const watches = inotifyWatches(pid);
  const peak = statusKb(pid, 'VmHWM');
  const alive = (): boolean => child.exitCode === null;
  let changes: Awaited<ReturnType<typeof measureChanges>> | null = null;
  let rescans: Awaited<ReturnType<typeof measureRescans>> | null = null;
  let idle: IdleSample | null = null;
  if (readyMs !== null) {
    changes = await measureChanges({ treeDir: tree.dir, statePath, count: CHANGES, stderr: () => stderr, alive });
    log(`changes: ${JSON.stringify(changes.samples)}${changes.problem === null ? '' : ` (${changes.problem})`}`);
    rescans = await measureRescans({ count: RESCANS, rescanMs: RESCAN_MINUTES * 60_000, stderr: () => stderr, alive });
    log(`rescans: ${JSON.stringify(rescans.tookMs)} ms${rescans.problem === null ? '' : ` (${rescans.problem})`}`);
    if (alive()) {
      writeFileSync(config, readFileSync(config, 'utf8').replace(`rescanMinutes: ${RESCAN_MINUTES}`, 'rescanMinutes: 60'));
      const reloaded = Date.now() + 30_000;
      while (alive() && !stderr.includes('config reloaded: watch.rescanMinutes') && Date.now() < reloaded)
        await new Promise((r) => setTimeout(r, 50));
      // The reload's own cycle, or a rescan begun before it, ends first.
      let cycles = -1;
      let since = Date.now();
      while (alive() && Date.now() - since < IDLE_AFTER_MS) {
        const n = stderr.split('"msg":"sync cycle done"').length;
        if (n !== cycles) [cycles, since] = [n, Date.now()];
        await new Promise((r) => setTimeout(r, 100));
      }
      if (alive()) idle = await measureIdle(pid, IDLE_MS);
      log(`idle: ${JSON.stringify(idle)}`);
    }
  }
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) problem ??= `kbsync watch exited ${code} at SIGTERM: ${stderr.slice(0, 400)}`;
  changes?.cleanup();
  writeFileSync(join(work, 'daemon.stderr'), stderr);
  const watching = stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg?: string; time?: number })
    .find((l) => l.msg === 'watching');
  const watchingMs = watching?.time === undefined ? null : watching.time - spawnedAtMs;
  log(
    `kbsync watch watching after ${watching?.time === undefined ? '?' : watching.time - spawnedAtMs} ms, ready in ${readyMs} ms, RSS ${rssReady} kB (peak ${peak} kB), ${watches} inotify watches, ${counts.folders} folders`,
  );
  return {
    files: counts.files,
    folders: counts.folders,
    bareWalkMs: counts.medianMs,
    watchingMs,
    readyMs,
    rssReadyMb: rssReady === null ? null : round1(rssReady / 1024),
    rssPeakMb: peak === null ? null : round1(peak / 1024),
    inotifyWatches: watches,
    debounceMs: DAEMON_DEBOUNCE_MS,
    changeToOutboxMs: changes?.samples.map((c) => c.enqueueMs) ?? [],
    changeSeenMs: changes?.samples.map((c) => c.seenMs) ?? [],
    changeCycleMs: changes?.samples.map((c) => c.cycleMs) ?? [],
    rescanMs: rescans?.tookMs ?? [],
    idle,
    problem,
    latencyProblem: readyMs === null ? 'the daemon was never ready' : (changes?.problem ?? rescans?.problem ?? null),
  };
}
