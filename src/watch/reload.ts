import { readFileSync, unwatchFile, watch, watchFile, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { configChanges, describeChange, restartNeeded, type ConfigChange } from '../config/diff.js';
import { ConfigError, formatProblem } from '../config/errors.js';
import type { Env } from '../config/interpolate.js';
import { loadConfigDetailed, type LoadedConfig } from '../config/load.js';
import { errorText, isKbsyncError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { ConfigReloadStatus } from './snapshot.js';

/** Why a reload was asked for: the SIGHUP signal, or the config file changed on disk. */
export type ReloadTrigger = 'SIGHUP' | 'file';

/** Reload requests from outside the daemon (SIGHUP); one made before the daemon listens waits for it. */
export type ReloadRequests = { request(why: ReloadTrigger): void; listen(fn: (why: ReloadTrigger) => void): () => void };

export function createReloadRequests(): ReloadRequests {
  let listener: ((why: ReloadTrigger) => void) | null = null;
  let waiting: ReloadTrigger | null = null;
  return {
    request(why) {
      if (listener === null) waiting = why;
      else listener(why);
    },
    listen(fn) {
      listener = fn;
      if (waiting !== null) fn(waiting);
      waiting = null;
      return () => {
        if (listener === fn) listener = null;
      };
    },
  };
}

/** How long the config file must be quiet before it is read (an editor's save is several events). */
const FILE_QUIET_MS = 300;
/** How often the config file is stat'ed when its folder cannot be watched. */
const FILE_POLL_MS = 10_000;
/** How often it is stat'ed beside a folder watch, for mounts whose folder events do not arrive (rare: kept slow, an idle daemon's wake-ups). */
const FILE_POLL_WATCHED_MS = 60_000;

export type ConfigReloaderOptions = {
  path: string;
  env: Env;
  logger: Logger;
  initial: LoadedConfig;
  status: ConfigReloadStatus;
  nowIso: () => string;
  /**
   * Applies a valid config whose changes the daemon can take: between cycles (the one running ends on
   * the old config). Resolves false when the daemon stopped first.
   */
  apply(next: LoadedConfig, changes: readonly ConfigChange[]): Promise<boolean>;
  /** The status changed (for the snapshot's readers). */
  onStatus(): void;
  /** A remote target's API key can change live (apply opens the target again). */
  credentialsLive?: boolean;
};

export type ConfigReloader = {
  /** Reads, validates and applies the config file now (after any reload under way). */
  reload(why: ReloadTrigger): Promise<void>;
  /** Starts following the config file: its folder's events (an atomic save is a rename) and a stat poll. */
  watchFile(): void;
  close(): Promise<void>;
};

/**
 * The daemon's config reload: the file read and validated again; on an error the daemon keeps running
 * on the config it has and logs each problem with its file and line; a change that needs a restart is
 * refused whole, with the keys and why; otherwise the change is applied and its keys logged (a
 * secret's value never).
 */
export function createConfigReloader(o: ConfigReloaderOptions): ConfigReloader {
  const { logger, status } = o;
  let current = o.initial;
  let running: Promise<void> | null = null;
  let again: ReloadTrigger | null = null;
  let closed = false;
  let lastText: string | null = readText(o.path);
  let missingLogged = false;
  let quiet: NodeJS.Timeout | undefined;
  let folderWatch: FSWatcher | null = null;

  const record = (
    outcome: 'applied' | 'refused' | 'failed' | 'unchanged',
    why: ReloadTrigger,
    fields: { changed?: string[]; errors?: string[] },
  ): void => {
    if (outcome !== 'unchanged') status.reloads[outcome]++;
    status.last = { at: o.nowIso(), trigger: why, outcome, changed: fields.changed ?? [], errors: fields.errors ?? [] };
    o.onStatus();
  };

  const once = async (why: ReloadTrigger): Promise<void> => {
    let next: LoadedConfig;
    try {
      next = loadConfigDetailed(o.path, o.env);
    } catch (err) {
      if (err instanceof ConfigError) {
        const errors = err.problems.map((p) => formatProblem(o.path, p));
        logger.error(
          { trigger: why, config: o.path, errors },
          `config not reloaded: ${errors[0] ?? err.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}; still running on the previous config`,
        );
        record('failed', why, { errors });
      } else {
        const message = isKbsyncError(err, 'config_not_found') ? `${o.path}: no config file there` : errorText(err);
        logger.error({ trigger: why, config: o.path }, `config not reloaded: ${message}; still running on the previous config`);
        record('failed', why, { errors: [message] });
      }
      return;
    }
    const changes = configChanges(current.config, next.config, { before: current.interpolations, after: next.interpolations });
    if (changes.length === 0) {
      // A file edit that changed no value (a comment) is not worth a status line, unless it undoes a
      // failed or refused edit: the status must stop saying so.
      const undone = status.last?.outcome === 'failed' || status.last?.outcome === 'refused';
      if (why !== 'SIGHUP' && !undone) return;
      logger.info({ trigger: why, config: o.path }, 'config reloaded: nothing changed');
      record('unchanged', why, {});
      return;
    }
    const changed = changes.map(describeChange);
    const refused = restartNeeded(current.config, changes, { credentialsLive: o.credentialsLive === true });
    if (refused.length > 0) {
      logger.warn(
        { trigger: why, config: o.path, restartNeeded: refused.map((r) => r.key), changed },
        `config not reloaded: ${refused.map((r) => `${r.key} changed (${r.why})`).join('; ')}: restart kbsync watch to apply it; still running on the previous config`,
      );
      record('refused', why, { changed, errors: refused.map((r) => `${r.key}: needs a restart (${r.why})`) });
      return;
    }
    try {
      if (!(await o.apply(next, changes))) return;
    } catch (err) {
      logger.error({ trigger: why, config: o.path, err: errorText(err) }, 'the reloaded config could not be applied');
      record('failed', why, { changed, errors: [errorText(err)] });
      return;
    }
    current = next;
    logger.info({ trigger: why, config: o.path, changed }, `config reloaded: ${changes.map((c) => c.key).join(', ')}`);
    record('applied', why, { changed });
  };

  const reload = (why: ReloadTrigger): Promise<void> => {
    if (closed) return Promise.resolve();
    if (running !== null) {
      again = why;
      return running;
    }
    running = (async () => {
      try {
        let next: ReloadTrigger | null = why;
        while (next !== null && !closed) {
          again = null;
          await once(next);
          next = again;
        }
      } finally {
        running = null;
      }
    })();
    return running;
  };

  /** The file's events settled: read it, and reload when its text changed. */
  const check = (): void => {
    const text = readText(o.path);
    if (text === null) {
      if (!missingLogged) logger.warn({ config: o.path }, 'the config file is gone; still running on the config it held');
      missingLogged = true;
      return;
    }
    missingLogged = false;
    if (text === lastText) return;
    lastText = text;
    void reload('file');
  };
  const soon = (): void => {
    if (closed) return;
    clearTimeout(quiet);
    quiet = setTimeout(check, FILE_QUIET_MS);
  };

  return {
    reload: (why) => {
      // A reload by signal reads the file as it is now: the next file event need not read it again.
      if (why === 'SIGHUP') lastText = readText(o.path) ?? lastText;
      return reload(why);
    },
    watchFile() {
      try {
        // The folder, not the file: an editor's atomic save renames a new file over the old one, and a
        // mounted ConfigMap swaps a symlink of another name. Any event reads the file; its text decides.
        folderWatch = watch(dirname(o.path), { persistent: false }, soon);
        folderWatch.on('error', () => folderWatch?.close());
      } catch (err) {
        logger.debug({ config: o.path, err: errorText(err) }, 'the config folder cannot be watched; the config file is stat-polled');
      }
      watchFile(o.path, { interval: folderWatch === null ? FILE_POLL_MS : FILE_POLL_WATCHED_MS, persistent: false }, soon);
      // An edit made while the daemon started (after the config was read) has had no event of its own.
      void reload('file');
    },
    async close() {
      closed = true;
      clearTimeout(quiet);
      folderWatch?.close();
      unwatchFile(o.path);
      await running;
    },
  };
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
