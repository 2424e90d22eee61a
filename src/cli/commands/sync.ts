import { Option, type Command } from 'commander';
import { KbsyncError } from '../../shared/errors.js';
import type { SyncOptions } from '../../sync/executor/run-sync.js';
import type { CiReportOptions } from '../ci-report/index.js';
import type { CliContext } from '../context.js';
import { EXIT, exitCodeForRun } from '../exit.js';
import { writeChunks } from '../output.js';
import { createProgress } from '../progress.js';
import { withSession } from '../session.js';
import { printable } from '../../shared/printable.js';

type SyncCliOptions = { json?: boolean; all?: boolean; wait?: boolean; waitTimeout: string | number } & CiReportOptions;

/** `kbsync sync`: one-shot sync (for CI); the exit code says how it went. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('sync')
    .description(
      'sync the sources into the dataset once; exit 0 done, 1 items failed, 3 stopped by the budget or a limit with work left, 4 refused by the remote',
    )
    .option('--json', 'print one JSON document: {"summary": {...}, "items": [...]}')
    .option('--all', 'list every item: unchanged files too, and each unsupported file when there are many')
    .option('--wait', 'wait for remote processing, and reprocess failures within budget')
    .addOption(
      new Option('--wait-timeout <seconds>', 'give up waiting after this long (exit 3 if files are still processing)')
        .default('600')
        .argParser(parseSeconds),
    )
    .option(
      '--report-md <file>',
      'write a Markdown report (counts, credits, failures, skipped files); also appended to $GITHUB_STEP_SUMMARY when set',
    )
    .option('--junit <file>', 'write a JUnit XML report: one test case per file action')
    .action(async (options: SyncCliOptions, cmd: Command) => {
      // A sync that dies before its report (config, state, target, the run itself): the report says so.
      const { reportingFailures } = await import('../ci-report/from-failure.js');
      await reportingFailures('kbsync sync', options, ctx, (onReported) => syncCommand(cmd, ctx, options, onReported));
    });
}

/** The sync itself; `onReported` once its CI reports are written. */
async function syncCommand(cmd: Command, ctx: CliContext, options: SyncCliOptions, onReported: () => void): Promise<void> {
  await withSession(cmd, ctx, async (session) => {
    const { runSync } = await import('../../sync/executor/index.js');
    const { formatRunChunks, jsonReportChunks } = await import('../../sync/report/index.js');
    const progress = createProgress(ctx.stderr, { enabled: options.json !== true });
    // Off a terminal nothing is drawn: the run gets no callbacks (none per hashed file either).
    const bar: SyncOptions = progress.active
      ? {
          onHashProgress: (done, total) => progress.update('hashing', done, total),
          onProgress: (done, total, item) =>
            progress.update('uploading', done, total, item.source.length > 0 ? item.remoteName : item.path),
          onWaitProgress: (settled, total) => progress.update('waiting', settled, total, 'processed'),
          onEntryProgress: (done, total, entries) =>
            progress.update(
              'writing',
              done,
              total,
              entries.length === 1 ? `${entries[0]?.source}/${entries[0]?.path}` : `${entries.length} entries`,
            ),
        }
      : {};
    const run = await runSync(session, {
      ...bar,
      // Unchanged files are counted, not listed: only --all lists them in the text and CI reports (--json makes them from their rows).
      countUnchanged: options.all !== true,
      ...(options.wait === true ? { wait: { timeoutMs: Number(options.waitTimeout) * 1000 } } : {}),
    });
    progress.finish();
    // Notes go to stderr in both modes: stdout holds only the report (one JSON document with --json).
    for (const note of run.notes) ctx.stderr.write(`kbsync: ${printable(note)}\n`);
    if (options.json === true) writeChunks(ctx, jsonReportChunks(run, run.unlisted));
    else writeChunks(ctx, formatRunChunks(run, { showUnchanged: options.all === true, unlisted: run.unlisted }));
    const { syncCiReports } = await import('../ci-report/sync-reports.js');
    await syncCiReports(session, run, options);
    onReported();
    if (run.stop?.by === 'service') {
      ctx.stderr.write(`kbsync: stopped spending: the service refused us (${run.stop.code}): ${run.stop.message}\n`);
      if (run.stop.code === 'insufficient_credits') {
        const { creditsAdvice } = await import('../credits-advice.js');
        const [first, ...rest] = await creditsAdvice(run, await session.getTarget());
        ctx.stderr.write(`kbsync: ${first}\n${rest.map((line) => `${line}\n`).join('')}`);
      }
      ctx.exitCode = EXIT.refused;
    } else {
      // A charge above plan stops the spending; the items it left unsent count as deferred (exit 3).
      if (run.stop !== null) ctx.stderr.write(`kbsync: stopped spending: ${run.stop.message}\n`);
      // --wait that timed out with files still processing is a limit that left work, and a charge above
      // the cost table stopped the spending (calls in flight may have taken a cap past its limit): exit 3
      // unless something failed.
      const code = exitCodeForRun(run.totals);
      ctx.exitCode = code === EXIT.ok && (run.stillProcessing > 0 || run.stop !== null) ? EXIT.stopped : code;
    }
  });
}

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new KbsyncError('usage', `--wait-timeout: a number of seconds > 0, got "${value}"`);
  return n;
}
