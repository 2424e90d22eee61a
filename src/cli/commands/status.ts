import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import { withSession } from '../session.js';

/** `kbsync status`: tracked files, pending work, credits spent per period, the last run. No remote call. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description('tracked files, pending work, credits used per period and the last run (makes no remote call)')
    .option('--json', 'print one JSON document: {"summary": {...}, "items": [...], "credits": {...}, "outbox": {...}}')
    .action(async (options: { json?: boolean }, cmd: Command) => {
      await withSession(cmd, ctx, async ({ state, config }) => {
        const { capsOf } = await import('../../sync/executor/index.js');
        const { statusReport, formatStatus } = await import('../../sync/report/status.js');
        const tracked = [...state.loadTrackedFiles().values()];
        const report = statusReport({
          tracked,
          lastRun: state.lastRun('sync'),
          credits: state.creditsUsed(null),
          caps: capsOf(config),
          outbox: { pending: state.pendingOps().length, unknown: state.unknownOps().length },
        });
        if (options.json === true) writeJson(ctx, report);
        else writeLines(ctx, formatStatus(report));
      });
    });
}
