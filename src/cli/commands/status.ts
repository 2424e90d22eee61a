import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import { loadCommandConfig } from '../config-option.js';
import { withSession } from '../session.js';
import type { PgStateStore } from '../../sync/state/pg/index.js';
import type { RunnerStatus } from '../../sync/report/status.js';

/** The shared state's runners as `status` shows them. */
function runnersOf(state: PgStateStore): RunnerStatus[] {
  return state.runners().map(({ id, host, pid, scope, ...rest }) => ({ id, host, pid, sources: scope, ...rest }));
}
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
      const { config: loaded } = await loadCommandConfig(cmd, ctx);
      const { readRunningDaemon } = await import('../../watch/status-file.js');
      const daemon = readRunningDaemon(localStatePath(loaded));
      await withSession(
        cmd,
        ctx,
        async ({ state, config }) => {
          const { capsOf } = await import('../../sync/executor/index.js');
          const { statusReport, formatStatus } = await import('../../sync/report/status.js');
          const tracked = [...state.loadTrackedFiles().values()];
          const report = statusReport({
            tracked,
            lastRun: state.lastRun('sync'),
            credits: state.creditsUsed(null),
            caps: capsOf(config),
            outbox: { pending: state.pendingOps().length, unknown: state.unknownOps().length },
            daemon,
            entryStatuses: [...state.trackedEntries().values()].map((e) => e.status),
            ...('runners' in state ? { runners: runnersOf(state as PgStateStore) } : {}),
          });
          if (options.json === true) writeJson(ctx, report);
          else writeLines(ctx, formatStatus(report));
        },
        // A shared PostgreSQL state is read as a view: status is no runner, and takes no source from one that runs elsewhere.
        // Beside a runner that holds a SQLite state, it is read read-only.
        { lock: !isPostgresUrl(loaded.state), access: 'reader' },
      );
    });
}
