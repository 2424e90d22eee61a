import { sep } from 'node:path';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { errorText } from '../shared/errors.js';
import { PATHS_NEVER_WATCHED, PROBE_PREFIX, type DaemonContext } from './context.js';
import type { BurstScope } from './burst.js';
import type { CycleReason } from './scheduler.js';
import type { SourceWatch } from './snapshot.js';
import { createWatchRepair } from './watch-repair.js';
import type { CreateWatcher, FolderWatcher, WatchBackend } from './watcher.js';

const ENOSPC_ADVICE =
  'out of inotify watches (ENOSPC): raise the limit with `sudo sysctl fs.inotify.max_user_watches=524288` (persist it in /etc/sysctl.d/), or set watch.backend: polling';

/**
 * The inotify watch limit that applies here: the lowest of fs.inotify.max_user_watches and this user
 * namespace's user.max_inotify_watches (a container's own); null where neither can be read.
 */
export function inotifyWatchLimit(): number | null {
  const limits = ['/proc/sys/fs/inotify/max_user_watches', '/proc/sys/user/max_inotify_watches'].flatMap((path) => {
    try {
      const n = Number(readFileSync(path, 'utf8').trim());
      return Number.isFinite(n) ? [n] : [];
    } catch {
      return [];
    }
  });
  return limits.length === 0 ? null : Math.min(...limits);
}

/** The note of a source whose folders past the inotify limit are polled: how many, and what to do. */
export function polledNote(folders: { polled: number; watched: number }, pollIntervalMs: number): string {
  const limit = inotifyWatchLimit();
  const total = folders.polled + folders.watched;
  return (
    `${folders.polled} of ${total} folders polled (their entries stat'ed every ${pollIntervalMs} ms or slower), the others by events: ` +
    `out of inotify watches (ENOSPC${limit === null ? '' : `, fs.inotify.max_user_watches is ${limit}`}); raise the limit with ` +
    `\`sudo sysctl fs.inotify.max_user_watches=524288\` (persist it in /etc/sysctl.d/) and the polled folders move to events by themselves`
  );
}

/** Keeps a source's entry in the snapshot (and the log) in step with the folders its watcher polls. */
function reportPolled(ctx: DaemonContext, entry: SourceWatch, note: string | null): (folders: { polled: number; watched: number }) => void {
  const { logger, config } = ctx.deps;
  return (folders) => {
    const was = entry.folders?.polled ?? 0;
    if (folders.polled === 0) {
      delete entry.folders;
      entry.note = note;
    } else {
      entry.folders = folders;
      entry.note = polledNote(folders, config.watch.pollIntervalMs);
    }
    const where = { source: entry.source, root: entry.root, ...folders };
    if (folders.polled > 0 && was === 0) logger.error(where, entry.note as string);
    else if (folders.polled === 0 && was > 0) logger.info(where, 'every folder is watched by events again');
    ctx.publish();
  };
}

export type DaemonWatching = {
  /** Watches every folder source: events where a probe proves them (watch.backend: auto), else polling. */
  start(): Promise<void>;
  /** After a cycle: every folder it walked is watched (see createWatchRepair). */
  afterCycle(scope: BurstScope, reasons: readonly CycleReason[]): Promise<void>;
  close(): Promise<void>;
};

/**
 * The folder sources' watchers. Their events are hints that arm a cycle (the walk decides what
 * changed); a watcher that fails or runs out of inotify watches falls back to polling, and one that
 * cannot watch at all leaves the folder to the rescans.
 */
export function createDaemonWatching(ctx: DaemonContext, createWatcher: CreateWatcher): DaemonWatching {
  const { deps, snapshot, burst } = ctx;
  const { config, logger } = deps;
  const { counters } = snapshot;
  const w = config.watch;
  const watchers = new Map<string, FolderWatcher>();
  const probes = new Map<string, () => void>();

  const onEvent = (absPath: string): void => {
    const name = absPath.slice(absPath.lastIndexOf(sep) + 1);
    if (name.startsWith(PROBE_PREFIX)) {
      probes.get(absPath)?.();
      return;
    }
    counters.events++;
    ctx.plans.generation++;
    ctx.scheduler.hint('changes', burst.add(absPath));
  };

  const startWatch = async (source: string, root: string, backend: WatchBackend, note: string | null): Promise<void> => {
    const entry: SourceWatch = { source, root, backend, note };
    const onPolled = reportPolled(ctx, entry, note);
    const onError = (err: unknown): void => {
      counters.watcherErrors++;
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (code === 'ENOSPC' && entry.backend === 'events') {
        logger.error({ source, root }, ENOSPC_ADVICE);
        void switchToPolling(entry, ENOSPC_ADVICE);
        return;
      }
      // A watch error may hide changes: look again, everywhere (the walk is the truth).
      logger.warn({ source, root, err: errorText(err) }, 'the watcher reported an error; rescanning');
      burst.whole();
      ctx.scheduler.hint('changes');
    };
    try {
      watchers.set(
        source,
        await createWatcher(
          { root, backend, ignored: ctx.ignored, ignoredNames: [...PATHS_NEVER_WATCHED], pollIntervalMs: w.pollIntervalMs },
          { onEvent, onError, onPolled },
        ),
      );
    } catch (err) {
      counters.watcherErrors++;
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (backend === 'events') {
        const why = code === 'ENOSPC' ? ENOSPC_ADVICE : `file-system events could not be watched (${errorText(err)})`;
        logger.error({ source, root }, `${why}; polling instead`);
        await startWatch(source, root, 'polling', why);
        return;
      }
      logger.error(
        { source, root, err: errorText(err) },
        `the folder cannot be watched at all; only the rescans every ${w.rescanMinutes} min will see its changes`,
      );
      entry.backend = 'none';
      entry.note = `cannot be watched: ${errorText(err)}`;
    }
    const at = snapshot.watches.findIndex((s) => s.source === source);
    if (at >= 0) snapshot.watches[at] = entry;
    else snapshot.watches.push(entry);
  };

  const switchToPolling = async (entry: SourceWatch, why: string): Promise<void> => {
    const current = watchers.get(entry.source);
    watchers.delete(entry.source);
    await current?.close().catch(() => {});
    if (ctx.lifetime.signal.aborted) return;
    await startWatch(entry.source, entry.root, 'polling', why);
    burst.whole();
    ctx.scheduler.hint('changes');
    ctx.publish();
  };

  /** Writes a probe file in the folder and waits for its event; no event in time means events do not work here. */
  const probe = async (root: string): Promise<'seen' | 'missed' | 'unwritable'> => {
    const path = `${root}${sep}${PROBE_PREFIX}${process.pid}`;
    const seen = new Promise<void>((resolve) => probes.set(path, resolve));
    try {
      writeFileSync(path, 'kbsync watch probe: safe to delete\n');
    } catch {
      probes.delete(path);
      return 'unwritable';
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'missed'>((resolve) => (timer = setTimeout(() => resolve('missed'), w.probeTimeoutMs)));
    const verdict = await Promise.race([seen.then(() => 'seen' as const), timeout]);
    clearTimeout(timer);
    probes.delete(path);
    try {
      unlinkSync(path);
    } catch {
      // Already gone: nothing to tidy.
    }
    return verdict;
  };

  const start = async (): Promise<void> => {
    for (const source of ctx.folderSources) {
      const backend: WatchBackend = w.backend === 'polling' ? 'polling' : 'events';
      await startWatch(source.name, source.path, backend, w.backend === 'polling' ? 'watch.backend: polling' : null);
      if (w.backend !== 'auto' || watchers.get(source.name)?.backend !== 'events') continue;
      const verdict = await probe(source.path);
      if (verdict === 'missed') {
        const why = `no file-system event arrived for a probe file within ${w.probeTimeoutMs} ms (a network mount, a Docker bind mount or WSL2?)`;
        logger.warn({ source: source.name, root: source.path, pollIntervalMs: w.pollIntervalMs }, `${why}: polling instead`);
        await switchToPolling(snapshot.watches.find((s) => s.source === source.name) as SourceWatch, why);
      } else if (verdict === 'unwritable') {
        // A read-only mount (a container's `:ro` volume) may deliver no events either: unproven, it is polled.
        const why = 'the folder is not writable, so no probe file could prove its file-system events (watch.backend: events trusts them)';
        logger.info({ source: source.name, root: source.path, pollIntervalMs: w.pollIntervalMs }, `${why}: polling instead`);
        await switchToPolling(snapshot.watches.find((s) => s.source === source.name) as SourceWatch, why);
      }
    }
    for (const s of snapshot.watches) logger.info({ source: s.source, root: s.root, backend: s.backend, note: s.note }, 'watching');
  };

  const repair = createWatchRepair(ctx, {
    byEvents: (source) => snapshot.watches.find((s) => s.source === source)?.backend === 'events',
    polled: (source, dir) => watchers.get(source)?.polls?.(dir) === true,
    watchFolder: (source, dir) =>
      createWatcher(
        { root: dir, backend: 'events', ignored: ctx.ignored, ignoredNames: [...PATHS_NEVER_WATCHED], pollIntervalMs: w.pollIntervalMs },
        {
          onEvent,
          onError: (err) => {
            counters.watcherErrors++;
            logger.warn({ source, root: dir, err: errorText(err) }, 'the watcher reported an error; rescanning');
            burst.whole();
            ctx.scheduler.hint('changes');
          },
        },
      ),
    rewatchRoot: async (source) => {
      const entry = snapshot.watches.find((s) => s.source === source) as SourceWatch;
      const current = watchers.get(source);
      watchers.delete(source);
      await current?.close().catch(() => {});
      await startWatch(source, entry.root, 'events', entry.note);
    },
  });

  const close = async (): Promise<void> => {
    await repair.close();
    await Promise.all([...watchers.values()].map((x) => x.close().catch(() => {})));
    watchers.clear();
  };

  return { start, afterCycle: repair.afterCycle, close };
}
