import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { writeChunks, writeJson, writeLines } from '../output.js';
import { configPathOf, loadCommandConfig } from '../config-option.js';
import { ConfigError } from '../../config/errors.js';
import { errorDocument, reportError } from '../exit.js';
import { withSession } from '../session.js';
import { isPostgresUrl, localStatePath } from '../../shared/state-url.js';

/** `kbsync status`: tracked files, pending work, credits spent per period, the last run. No remote call. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description(
      'tracked files, pending work, credits used per period and the last run; for a running `kbsync watch`, when it last synced and what it waits for (makes no remote call)',
    )
    .option('--json', 'print one JSON document: {"summary": {...}, "items": [...], "credits": {...}, "outbox": {...}}')
    .action(async (options: { json?: boolean }, cmd: Command) => {
      // A running `kbsync watch` holds the state's lock: its status file says what it does, and the state is read beside it.
      const { readRunningDaemon } = await import('../../watch/status-file.js');
      const loaded = await loadCommandConfig(cmd, ctx).then(
        (l) => l.config,
        (err: unknown) => reportDaemonBeside(err, cmd, ctx, options.json === true),
      );
      if (loaded === null) return;
      const daemon = readRunningDaemon(localStatePath(loaded));
      await withSession(
        cmd,
        ctx,
        async ({ state, config }) => {
          const { formatStatus } = await import('../../sync/report/status.js');
          const { statusDocument } = await import('../../watch/http/page/status-document.js');
          const document = statusDocument(state, config, daemon);
          if (options.json === true) writeChunks(ctx, document.json());
          else writeLines(ctx, formatStatus(document.report()));
        },
        // A shared PostgreSQL state is read as a view: status is no runner, and takes no source from one that runs elsewhere.
        // Beside a runner that holds a SQLite state, it is read read-only.
        // It repairs nothing: the writer's lock only to create or migrate the state, never held while it reads.
        { lock: !isPostgresUrl(loaded.state), access: 'reader', repairs: false },
      );
    });
}

/**
 * The config does not load: the daemon running on its state (its status file, found by the state the
 * file names) is reported first, then the config's error; the exit code is the error's. Returns null
 * once the JSON document is written, else throws the error.
 */
async function reportDaemonBeside(err: unknown, cmd: Command, ctx: CliContext, json: boolean): Promise<null> {
  if (!(err instanceof ConfigError)) throw err;
  const { statePathOfBrokenConfig } = await import('../../config/state-of.js');
  const { readRunningDaemon } = await import('../../watch/status-file.js');
  const { formatDaemonStatus } = await import('../../sync/report/daemon-lines.js');
  const daemon = readRunningDaemon(statePathOfBrokenConfig(configPathOf(cmd, ctx).absolute, ctx.env));
  if (!json) {
    if (daemon !== null) writeLines(ctx, formatDaemonStatus(daemon));
    throw err;
  }
  const exitCode = reportError(err, ctx, { json: false });
  writeJson(ctx, { daemon, error: errorDocument(err, exitCode) });
  ctx.exitCode = exitCode;
  return null;
}
