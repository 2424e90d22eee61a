import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit.js';
import { configPathOf, loadCommandConfig } from '../config-option.js';
import { withSession } from '../session.js';
import { localStatePath } from '../../shared/state-url.js';
import type { DaemonControls } from '../../watch/daemon.js';
import type { createWatchPage } from '../watch-page.js';

/**
 * `kbsync watch`: the daemon. A first sync, then a sync cycle after each settled burst of changes, each
 * git poll, each budget period that opens on deferred work, and every watch.rescanMinutes; until SIGTERM
 * or SIGINT, after which it exits 0. SIGHUP, or an edit of the config file, reloads the config.
 * Logs are pino JSON lines on stderr, one per file action.
 */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('watch')
    .description(
      'keep syncing: a first sync, then one after each burst of changes, each git poll and every watch.rescanMinutes; reloads the config on SIGHUP and when it changes; stops on SIGTERM/SIGINT (exit 0)',
    )
    .option(
      '--http <host:port>',
      'serve the status page at /, its /api/status and /api/events, /healthz, /readyz, /metrics (Prometheus) and, with watch.webhookSecret, POST /webhooks on this address, e.g. 127.0.0.1:9464 (off loopback the page needs watch.httpToken)',
    )
    .action(async (options: { http?: string }, cmd: Command) => {
      // SIGHUP reloads the config (its default action would end the process); one that comes before the
      // daemon listens is kept for it.
      const reloads = (await import('../../watch/reload.js')).createReloadRequests();
      const onHangUp = (): void => reloads.request('SIGHUP');
      process.on('SIGHUP', onHangUp);
      const { parseListenAddress, readiness } = await import('../../watch/http/http-server.js');
      const listen = options.http === undefined ? null : parseListenAddress(options.http);
      const { createLogger, logFormatOf } = await import('../../shared/logger.js');
      // One line per file action is the point of a daemon's log: info unless KBSYNC_LOG_LEVEL says otherwise.
      const logger =
        ctx.env.KBSYNC_LOG_LEVEL === undefined
          ? createLogger(
              { level: 'info' },
              { write: (text: string) => ctx.stderr.write(text) } as NodeJS.WritableStream,
              logFormatOf(ctx.stderr, ctx.env),
            )
          : await ctx.getLogger();
      const watchCtx: CliContext = { ...ctx, getLogger: () => Promise.resolve(logger) };
      // Which config values came from `${VAR}`: a reload's log never shows a secret one.
      const { interpolations } = await loadCommandConfig(cmd, ctx).catch((err: unknown) => {
        process.off('SIGHUP', onHangUp);
        throw err;
      });
      await withSession(cmd, watchCtx, async (session) => {
        // A daemon lives on: its memory between cycles matters more than a one-shot command's (docs/benchmarks.md).
        const { keepYoungGenerationSmall } = await import('../../shared/release-memory.js');
        keepYoungGenerationSmall();
        const { runWatchDaemon } = await import('../../watch/daemon.js');
        const { createChokidarWatcher } = await import('../../watch/chokidar-watcher.js');
        let createWatcher = createChokidarWatcher;
        let library = 'chokidar';
        if (session.config.watch.watcher === 'node') {
          createWatcher = (await import('../../watch/node-watcher.js')).createNodeWatcher;
          library = 'node (fs.watch)';
        } else if (session.config.watch.watcher === 'parcel') {
          try {
            createWatcher = (await import('../../watch/parcel-watcher.js')).createParcelWatcher;
            library = '@parcel/watcher';
          } catch (err) {
            // @parcel/watcher not installed (an optional dependency) or no prebuilt for this platform: chokidar
            // watches instead, at a cost in memory.
            logger.warn({ err: String(err) }, '@parcel/watcher cannot load here; watching with chokidar (one inotify watch per file)');
          }
        }
        if (session.config.watch.backend !== 'polling')
          logger.info({ watcher: library }, `file-system events from ${library} (watch.watcher)`);
        const { writeDaemonStatus, startHeartbeat } = await import('../../watch/status-file.js');
        const { capsOf } = await import('../../sync/executor/index.js');
        // The metrics' caps: updated in place when a reload changes the budget.
        const caps = capsOf(session.config);
        type Snapshot = Parameters<NonNullable<Parameters<typeof runWatchDaemon>[1]['onSnapshot']>>[0];
        const { config, state } = session;
        let snapshot: Snapshot | null = null;
        let httpAddress: string | null = null;
        // The daemon hands on no snapshot once it has ended (daemon.ts, publishGate): the save with stoppedAt is the last.
        // Between saves the file's mtime beats (startHeartbeat), from the first save until the last.
        let heartbeat: { stop(): void } | null = null;
        let ended = false;
        const save = (stoppedAt: string | null): void => {
          if (stoppedAt !== null) {
            ended = true;
            heartbeat?.stop();
          }
          if (snapshot === null) return;
          try {
            writeDaemonStatus(localStatePath(config), { ...snapshot, http: httpAddress, stoppedAt });
          } catch (err) {
            logger.warn({ err: String(err) }, 'could not write the daemon status file');
            // A file that no longer says what the daemon does must not look fresh: `status` then says it is not answering.
            heartbeat?.stop();
            heartbeat = null;
            return;
          }
          if (!ended) heartbeat ??= startHeartbeat(localStatePath(config));
        };

        const stop = new AbortController();
        const onSignal = (signal: NodeJS.Signals): void => {
          logger.info({ signal }, 'signal received');
          stop.abort();
        };
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
        let http: { address: string; port: number; close(): Promise<void> } | null = null;
        let controls: DaemonControls | null = null;
        let page: Awaited<ReturnType<typeof createWatchPage>> | null = null;
        try {
          if (listen !== null) {
            const { startDaemonHttp } = await import('../../watch/http/http-server.js');
            const { createMetrics } = await import('../../watch/http/metrics.js');
            const secret = config.watch.webhookSecret;
            const outcomes: Record<string, number> = {};
            const metrics = createMetrics({
              snapshot: () => snapshot as Snapshot,
              state,
              caps,
              ...(secret === null ? {} : { webhooks: () => outcomes }),
            });
            const { receiveWebhook } = await import('../../watch/http/webhooks.js');
            const webhooks =
              secret === null
                ? null
                : (headers: Record<string, string | string[] | undefined>, body: Buffer) => {
                    const answer = receiveWebhook({ secret, store: state, nowMs: Date.now, logger }, headers, body);
                    outcomes[answer.outcome] = (outcomes[answer.outcome] ?? 0) + 1;
                    return answer;
                  };
            const { createWatchPage } = await import('../watch-page.js');
            page = await createWatchPage({
              session,
              listen,
              token: config.watch.httpToken ?? (ctx.env.KBSYNC_HTTP_TOKEN || null),
              configPath: configPathOf(cmd, ctx).absolute,
              snapshot: () => snapshot,
              controls: () => controls,
              http: () => http,
            });
            if (page.warning !== null) logger.warn({ address: options.http }, page.warning);
            http = await startDaemonHttp({ ...listen, ready: () => readiness(snapshot), metrics, webhooks, page: page.page });
            httpAddress = http.address;
            logger.info(
              { address: http.address, webhooks: secret !== null },
              `http listening: the status page at /, /healthz /readyz /metrics${secret === null ? '' : ' and POST /webhooks'}`,
            );
          }
          const result = await runWatchDaemon(session, {
            signal: stop.signal,
            createWatcher,
            reload: {
              path: configPathOf(cmd, ctx).absolute,
              env: ctx.env,
              interpolations,
              requests: reloads,
              watchFile: true,
              onApplied: (next) => Object.assign(caps, capsOf(next)),
              // A new API key for the remote target: a new client, from the next cycle on.
              reopenTarget: async (next) => {
                const opened = await (await import('../target.js')).openTarget(next, logger);
                return { getClient: () => Promise.resolve(opened.client), close: opened.close };
              },
            },
            onSnapshot: (s) => {
              snapshot = s;
              save(null);
              page?.noteSnapshot(s);
              page?.page.changed();
            },
            onControls: (c) => (controls = c),
          }).finally(() => save(new Date().toISOString()));
          ctx.exitCode = EXIT.ok;
          if (result.graceExpired) {
            // Calls still in flight are recorded as in flight; the next start settles them from the remote
            // listing. Closing the state under them is not safe, so the process ends here (the lock is released at exit).
            process.exit(EXIT.ok);
          }
        } finally {
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          await http?.close();
        }
      }).finally(() => process.off('SIGHUP', onHangUp));
    });
}
