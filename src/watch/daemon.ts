import type { Env } from '../config/interpolate.js';
import type { ResolvedConfig } from '../config/schema.js';
import type { Interpolation } from '../config/yaml-source.js';
import type { SyncDeps } from '../sync/executor/index.js';
import { localStatePath } from '../shared/state-url.js';
import { startGeneration, type DaemonGeneration } from './generation.js';
import { createFileLines } from './file-lines.js';
import { startPlanServer } from './plan-server.js';
import { createConfigReloader, type ConfigReloader, type ReloadRequests } from './reload.js';
import type { DaemonSnapshot } from './snapshot.js';
import type { CreateWatcher } from './watcher.js';
import type { ExplainAnswer } from './explain-answer.js';
import type { RetryAnswer } from './retry-failed.js';

/** What the daemon's host (its status page) may ask of the generation in force. */
export type DaemonControls = {
  /** A full cycle as soon as none runs. */
  rescan(): void;
  /** True while a sync cycle runs. */
  running(): boolean;
  explain(path: string): Promise<ExplainAnswer>;
  /** Retries one failed file whose error is not permanent: the next cycle (woken now) reprocesses it. */
  retry(source: string, path: string): Promise<RetryAnswer>;
  /** The deps the cycles use now (a reload swaps their config and client). */
  deps(): SyncDeps;
};

export type DaemonOptions = {
  /** Aborted to shut down (SIGTERM, SIGINT). */
  signal: AbortSignal;
  createWatcher: CreateWatcher;
  /**
   * Called whenever the snapshot changes (after a cycle, at start and at the end): by the generation in
   * force only, and never after runWatchDaemon has settled (see publishGate).
   */
  onSnapshot?: (snapshot: DaemonSnapshot) => void;
  /** Called once the first generation has started, with what the daemon's host may ask of it. */
  onControls?: (controls: DaemonControls) => void;
  nowMs?: () => number;
  /** Config reload: the file read again at each request (SIGHUP) and, with `watchFile`, when it changes. */
  reload?: {
    path: string;
    env: Env;
    /** Which values of the running config came from `${VAR}` (never logged when secret). */
    interpolations: readonly Interpolation[];
    requests?: ReloadRequests;
    watchFile?: boolean;
    /** A new config is in force (for what the daemon's host reads from it: the metrics' caps). */
    onApplied?: (config: ResolvedConfig) => void;
    /** Opens the (remote) target again with a new API key; without it a new key needs a restart. */
    reopenTarget?: (config: ResolvedConfig) => Promise<ReopenedTarget>;
  };
};

export type DaemonResult = { cycles: number; graceExpired: boolean };

/** The target opened again by a reload (a new API key): the client the cycles use from then on. */
export type ReopenedTarget = { getClient: SyncDeps['getClient']; close(): Promise<void> };

/** Config keys whose change makes the daemon's parts again (watchers, scheduler, cycle): sources and watch.*. */
const remakes = (key: string): boolean => key.startsWith('sources.') || (key.startsWith('watch.') && key !== 'watch.shutdownGraceSeconds');

/**
 * `kbsync watch`: a first sync (which finds what changed while nothing was watching), then a sync cycle
 * after each burst of file-system events has been quiet for watch.debounceMs, after each git source's
 * pollSeconds, when a budget period that deferred work opens again, and at least every
 * watch.rescanMinutes. Each cycle is an ordinary sync (cycle.ts); the watchers (watching.ts) only say
 * when to look. A config reload waits for the cycle running, then puts the new config in force and
 * starts a full cycle under it (reload.ts). At the abort of `signal` the watchers close, no new paid
 * call starts, and the cycle running is given watch.shutdownGraceSeconds to finish.
 */
export async function runWatchDaemon(deps: SyncDeps, o: DaemonOptions): Promise<DaemonResult> {
  const gate = publishGate(o.onSnapshot);
  try {
    return await runDaemon(deps, o, gate);
  } finally {
    gate.end();
  }
}

/** Who may hand the snapshot on: one token per generation, the one in force only, none once the daemon ended. */
type PublishGate = {
  /** The publisher of a generation about to start: it alone publishes from now on. */
  next(): (snapshot: DaemonSnapshot) => void;
  /** No generation publishes (one being retired, until the next starts). */
  retire(): void;
  /** The daemon ended: nothing publishes any more (a part still closing, a call outliving the grace). */
  end(): void;
};

function publishGate(onSnapshot: DaemonOptions['onSnapshot']): PublishGate {
  let current: object | null = null;
  return {
    next() {
      const token = {};
      current = token;
      return (snapshot) => {
        if (current === token) onSnapshot?.(snapshot);
      };
    },
    retire: () => (current = null),
    end: () => (current = null),
  };
}

async function runDaemon(deps: SyncDeps, o: DaemonOptions, gate: PublishGate): Promise<DaemonResult> {
  const { logger } = deps;
  // The deps every cycle reads: a reload swaps their config between two cycles.
  const live: SyncDeps = { ...deps };
  const nowMs = o.nowMs ?? Date.now;
  // Ended by the signal, or by an error no retry mends (a generation's own lifetime ends it).
  const lifetime = new AbortController();
  if (o.signal.aborted) lifetime.abort();
  else o.signal.addEventListener('abort', () => lifetime.abort(), { once: true });
  const parts = {
    signal: lifetime.signal,
    nowMs,
    createWatcher: o.createWatcher,
    // One memory of the skips logged, for every generation: a reload does not log them all again.
    fileLines: createFileLines(deps.logger),
  };
  const retired = new WeakSet<DaemonGeneration>();
  const follow = (g: DaemonGeneration): DaemonGeneration => {
    g.ctx.lifetime.signal.addEventListener('abort', () => retired.has(g) || lifetime.abort(), { once: true });
    return g;
  };
  let gen = follow(await startGeneration(live, { ...parts, onSnapshot: gate.next() }));
  // `kbsync plan` asks the daemon over a local socket (beside the state, which a reload cannot move),
  // and is answered by the generation in force from what it holds in memory.
  const plans = await startPlanServer({ localStatePath: localStatePath(deps.config), answer: (req) => gen.answer(req), logger });
  const { snapshot } = gen.ctx;
  o.onControls?.({
    rescan: () => gen.scheduler.soon('rescan'),
    running: () => gen.scheduler.state().running,
    explain: (path) => gen.explain(path),
    retry: (source, path) => gen.retry(source, path),
    deps: () => live,
  });
  let fatal: unknown = null;
  // A reload making the daemon's parts again; the shutdown waits for it before it closes them.
  let remaking: Promise<void> = Promise.resolve();

  // The target a reload opened with a new API key (the session closes the one it opened).
  const opened: { target: ReopenedTarget | null } = { target: null };

  const apply = async (next: { config: ResolvedConfig }, changes: readonly { key: string }[]): Promise<boolean> => {
    const reopen = o.reload?.reopenTarget;
    const target = reopen !== undefined && changes.some((c) => c.key.startsWith('target.')) ? await reopen(next.config) : null;
    // Between cycles: the one running ends on the config it started with.
    if (gen.scheduler.state().running) logger.info('config change: applied when the sync cycle running ends');
    while (gen.scheduler.state().running && !lifetime.signal.aborted) await gen.scheduler.current();
    if (lifetime.signal.aborted) {
      await target?.close();
      return false;
    }
    live.config = next.config;
    if (target !== null) {
      const previous = opened.target;
      opened.target = target;
      live.getClient = target.getClient;
      void previous?.close().catch(() => {});
    }
    o.reload?.onApplied?.(next.config);
    if (!changes.some((c) => remakes(c.key))) {
      // Budget, upload, reindex, limits: read by each sync; the kept tracked index stays good.
      gen.scheduler.soon('reload');
      return true;
    }
    const old = gen;
    remaking = (async () => {
      // What the old parts do while they close (and any late timer of theirs) is published no more.
      gate.retire();
      await old.close();
      fatal ??= old.cycle.fatal();
      // Ended, so that nothing of it starts again (a watcher falling back to polling late).
      retired.add(old);
      old.ctx.lifetime.abort();
      if (lifetime.signal.aborted) return;
      snapshot.watches.length = 0;
      try {
        gen = follow(await startGeneration(live, { ...parts, snapshot, onSnapshot: gate.next() }));
      } catch (err) {
        // The old parts are closed and no new ones run: nothing would sync. Stop; the supervisor restarts.
        logger.error({ err: String(err) }, 'the daemon could not start again on the reloaded config: stopping');
        fatal ??= err;
        lifetime.abort();
        throw err;
      }
      gen.scheduler.soon('reload');
      gen.ctx.publish();
    })();
    await remaking;
    return true;
  };

  let reloader: ConfigReloader | null = null;
  let stopListening = (): void => {};
  if (o.reload !== undefined) {
    const r = o.reload;
    const loaded = { config: deps.config, interpolations: r.interpolations };
    const reload = createConfigReloader({
      path: r.path,
      env: r.env,
      logger,
      initial: loaded,
      status: snapshot.config,
      nowIso: () => new Date(nowMs()).toISOString(),
      apply,
      onStatus: () => gen.ctx.publish(),
      credentialsLive: r.reopenTarget !== undefined,
    });
    reloader = reload;
    if (r.watchFile === true) reload.watchFile();
    if (r.requests !== undefined) stopListening = r.requests.listen((why) => void reload.reload(why));
  }

  gen.scheduler.soon('start');
  gen.ctx.publish();

  await new Promise<void>((resolve) => {
    if (lifetime.signal.aborted) resolve();
    else lifetime.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  stopListening();
  const closingReloader = reloader?.close().catch(() => {});
  await remaking.catch(() => {});
  const graceSeconds = live.config.watch.shutdownGraceSeconds;
  logger.info({ graceSeconds }, 'shutting down: no new paid call starts; calls in flight may finish');
  await gen.closeWatchers();
  await plans?.close();
  gen.ctx.cycleAbort.abort();
  let graceTimer: NodeJS.Timeout | undefined;
  const grace = new Promise<'expired'>((resolve) => (graceTimer = setTimeout(() => resolve('expired'), graceSeconds * 1000)));
  const ended = await Promise.race([gen.scheduler.stop().then(() => 'ended' as const), grace]);
  clearTimeout(graceTimer);
  await gen.cycle.close();
  // A reload waiting for the cycle has given up by now (unless that cycle outlived the grace period).
  if (ended === 'ended') {
    await closingReloader;
    await opened.target?.close().catch(() => {});
  }
  gen.ctx.publish();
  const { counters } = snapshot;
  if (ended === 'expired')
    logger.warn(
      { graceSeconds },
      'calls still in flight after the grace period; the next start settles their outcome from the remote listing',
    );
  else logger.info({ cycles: counters.cycles }, 'stopped');
  fatal ??= gen.cycle.fatal();
  if (fatal !== null) throw fatal;
  return { cycles: counters.cycles, graceExpired: ended === 'expired' };
}
