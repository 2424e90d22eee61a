import type { Command } from 'commander';
import { resolve } from 'node:path';
import { isPostgresUrl } from '../../shared/state-url.js';
import type { CliContext } from '../context.js';
import { exitCodeForRun } from '../exit.js';
import { writeChunks, writeLines } from '../output.js';
import { withSession } from '../session.js';

/** `kbsync plan`: what a sync would do, per file, with reasons and credits; makes no paid call. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('plan')
    .description('show what a sync would do, per file, with reasons and credits (makes no paid call)')
    .option('--json', 'print one JSON document: {"summary": {...}, "items": [...]}')
    .option('--all', 'list every item: unchanged files too, and each unsupported file when there are many')
    .action(async (options: { json?: boolean; all?: boolean }, cmd: Command) => {
      if (process.env.PJGC) { const { PerformanceObserver } = await import('node:perf_hooks'); const gcs: string[] = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) gcs.push(`${(e.detail as {kind:number}).kind}@${e.startTime.toFixed(0)}+${e.duration.toFixed(1)}`); }).observe({ entryTypes: ['gc'] }); process.on('exit', () => process.stderr.write(`PJGC ${gcs.join(' ')}\n`)); }
      await withSession(cmd, ctx, async (session) => {
        // prepare.js, not the executor's index: a plan needs none of the paid-call machinery (p-queue, client).
        const { preparePlan } = await import('../../sync/executor/prepare.js');
        // --json of a large tree: the unchanged files' lines are made ahead in a helper thread (unchanged-lines.ts).
        const dbPath = isPostgresUrl(session.config.state) ? null : resolve(session.config.baseDir, session.config.state);
        const lines =
          options.json === true && dbPath !== null && !process.env.PJNOLINES ? (await import('../../sync/report/unchanged-lines.js')).UnchangedLines.start() : null;
        let prepared: Awaited<ReturnType<typeof preparePlan>>;
        try {
          prepared = await preparePlan(session, null, lines === null ? {} : { onTracked: (t) => lines.send(t, dbPath as string) });
        } catch (err) {
          lines?.stop();
          throw err;
        }
        const { plan, notes, tracked } = prepared;
        const PT = performance.now(); const PC = process.threadCpuUsage();
        if (process.env.PJT) process.on('exit', () => { const c = process.threadCpuUsage(PC); const a = process.threadCpuUsage(); process.stderr.write(`PJT plan ${PT.toFixed(0)} end ${performance.now().toFixed(0)} mainCpuTail ${((c.user + c.system) / 1000).toFixed(0)} mainCpuAll ${((a.user + a.system) / 1000).toFixed(0)}\n`); });
        // As the sync would end: 3 when the budget or a limit would leave work queued (a CI gate can stop on it).
        ctx.exitCode = exitCodeForRun(plan.totals);
        // Notes go to stderr in both modes, as sync's do: stdout holds only the report (one JSON document with --json).
        for (const note of notes) ctx.stderr.write(`kbsync: ${note}\n`);
        if (options.json === true) {
          if (lines === null) {
            const { jsonReportChunks } = await import('../../sync/report/json-report.js');
            writeChunks(ctx, jsonReportChunks(plan));
            return;
          }
          const { jsonPlanParts } = await import('../../sync/report/json-lines-report.js');
          try {
            writeChunks(ctx, jsonPlanParts(plan, tracked, lines));
          } finally {
            lines.stop();
          }
          return;
        }
        const { formatPlan } = await import('../../sync/report/index.js');
        writeLines(ctx, formatPlan(plan, { showUnchanged: options.all === true }));
      });
    });
}
