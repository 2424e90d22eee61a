import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { loadCommandConfig } from '../config-option.js';
import { exitCodeForRun } from '../exit.js';
import { writeChunks } from '../output.js';
import { withReaderSession } from '../session.js';
import { localStatePath } from '../../shared/state-url.js';
import { printable } from '../../shared/printable.js';

/**
 * How long `plan` waits for a running daemon before it reads the state itself: for its hello (a
 * daemon that lives greets at once; one stopped or hung does not), then for its plan (a walk).
 */
const DAEMON_TIMEOUTS = { helloMs: 2000, replyMs: 15_000 };

/** `kbsync plan`: what a sync would do, per file, with reasons and credits; makes no paid call. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('plan')
    .description('show what a sync would do, per file, with reasons and credits (makes no paid call)')
    .option('--json', 'print one JSON document: {"summary": {...}, "items": [...]}')
    .option('--all', 'list every item: unchanged files too, and each unsupported file when there are many')
    .option('--no-daemon', 'read the state and walk the sources here, even when a running `kbsync watch` could answer')
    .action(async (options: { json?: boolean; all?: boolean; daemon: boolean }, cmd: Command) => {
      // A running `kbsync watch` answers from what it holds in memory (plan-socket.ts): the same report.
      if (options.daemon && (await fromDaemon(cmd, ctx, options))) return;
      await withReaderSession(cmd, ctx, async (session) => {
        // prepare.js, not the executor's index: a plan needs none of the paid-call machinery (p-queue, client).
        const { preparePlan } = await import('../../sync/executor/prepare.js');
        // Unchanged files are counted as the walk finds them; a report that lists them makes them from their rows.
        const { plan, notes, unlisted } = await preparePlan(session, null, { countUnchanged: true });
        // As the sync would end: 3 when the budget or a limit would leave work queued (a CI gate can stop on it).
        ctx.exitCode = exitCodeForRun(plan.totals);
        // Notes go to stderr in both modes, as sync's do: stdout holds only the report (one JSON document with --json).
        for (const note of notes) ctx.stderr.write(`kbsync: ${printable(note)}\n`);
        if (options.json === true) {
          const { jsonReportChunks } = await import('../../sync/report/json-report.js');
          writeChunks(ctx, jsonReportChunks(plan, unlisted));
          return;
        }
        const { formatPlanChunks } = await import('../../sync/report/index.js');
        writeChunks(ctx, formatPlanChunks(plan, { showUnchanged: options.all === true, unlisted }));
      });
    });
}

/** Prints the plan of the daemon of this state, if one runs and answers; false: the caller makes the plan itself. */
async function fromDaemon(cmd: Command, ctx: CliContext, options: { json?: boolean; all?: boolean }): Promise<boolean> {
  const { config } = await loadCommandConfig(cmd, ctx);
  const { askDaemonPlan } = await import('../../watch/plan-socket.js');
  const req = { json: options.json === true, all: options.all === true };
  const reply = await askDaemonPlan(localStatePath(config), req, DAEMON_TIMEOUTS);
  if (reply === null) return false;
  if ('silent' in reply) {
    const { readRunningDaemon } = await import('../../watch/status-file.js');
    const pid = reply.pid ?? readRunningDaemon(localStatePath(config))?.pid ?? null;
    const who = pid === null ? 'the kbsync watch of this state' : `the running kbsync watch (pid ${pid})`;
    const why =
      reply.silent === 'hello'
        ? `did not answer within ${DAEMON_TIMEOUTS.helloMs / 1000} s (stopped or hung: a SIGSTOP, a suspended machine, a debugger)`
        : `answered but sent no plan within ${DAEMON_TIMEOUTS.replyMs / 1000} s`;
    ctx.stderr.write(`kbsync: ${who} ${why}; reading the state beside it\n`);
    return false;
  }
  if (!reply.ok) {
    ctx.stderr.write(
      `kbsync: the running kbsync watch (pid ${reply.pid}) cannot answer now (${reply.reason}); reading the state beside it\n`,
    );
    return false;
  }
  ctx.exitCode = exitCodeForRun(reply.totals);
  for (const note of reply.notes) ctx.stderr.write(`kbsync: ${printable(note)}\n`);
  ctx.stderr.write(`kbsync: answered by the running kbsync watch (pid ${reply.pid}) from what it holds in memory\n`);
  ctx.stdout.write(reply.out);
  return true;
}
