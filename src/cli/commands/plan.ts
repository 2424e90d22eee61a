import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { exitCodeForRun } from '../exit.js';
import { writeChunks, writeLines } from '../output.js';
import { withReaderSession } from '../session.js';

/** `kbsync plan`: what a sync would do, per file, with reasons and credits; makes no paid call. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('plan')
    .description('show what a sync would do, per file, with reasons and credits (makes no paid call)')
    .option('--json', 'print one JSON document: {"summary": {...}, "items": [...]}')
    .option('--all', 'list every item: unchanged files too, and each unsupported file when there are many')
    .action(async (options: { json?: boolean; all?: boolean }, cmd: Command) => {
      await withReaderSession(cmd, ctx, async (session) => {
        // prepare.js, not the executor's index: a plan needs none of the paid-call machinery (p-queue, client).
        const { preparePlan } = await import('../../sync/executor/prepare.js');
        const { plan, notes } = await preparePlan(session, null);
        // As the sync would end: 3 when the budget or a limit would leave work queued (a CI gate can stop on it).
        ctx.exitCode = exitCodeForRun(plan.totals);
        // Notes go to stderr in both modes, as sync's do: stdout holds only the report (one JSON document with --json).
        for (const note of notes) ctx.stderr.write(`kbsync: ${note}\n`);
        if (options.json === true) {
          const { jsonReportChunks } = await import('../../sync/report/json-report.js');
          writeChunks(ctx, jsonReportChunks(plan));
          return;
        }
        const { formatPlan } = await import('../../sync/report/index.js');
        writeLines(ctx, formatPlan(plan, { showUnchanged: options.all === true }));
      });
    });
}
