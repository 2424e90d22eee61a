import { Option, type Command } from 'commander';
import { dirname, resolve } from 'node:path';
import { fileSourceNames, isIntelligenceSource } from '../../config/source-kinds.js';
import { localStatePath } from '../../shared/state-url.js';
import type { EntryRecordRef } from '../../sync/source-index.js';
import { isAdvancedPlan } from '../../shared/plans.js';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit.js';
import { writeJson, writeLines } from '../output.js';
import { withGuestSession, type Session } from '../session.js';
import type { CiReportOptions } from '../ci-report/index.js';
import { parseTopK } from './query.js';

type CheckCliOptions = { questions: string; topK: number; json?: boolean } & CiReportOptions;

/**
 * `kbsync check --questions FILE`: asks the dataset each question of FILE and checks that the expected
 * source paths come back in the top k; exit 1 when any check fails. Queries cost credits: planned,
 * admitted against the caps and recorded in the outbox before each call, like a sync's.
 */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('check')
    .description(
      'ask the dataset the questions of a checks file and check that the expected source paths come back in the top k (costs 1 credit per question); exit 1 when any check fails',
    )
    .requiredOption(
      '--questions <file>',
      'a YAML list of {question, expect: [path, ...], topK?}; a path as plan prints it, an intelligence entry source/file#key, or id:N',
    )
    .addOption(new Option('--top-k <n>', 'results per question, for checks that set no topK (1-20)').default(5).argParser(parseTopK))
    .option('--json', 'print one JSON document: {"summary": {...}, "checks": [...]}')
    .option(
      '--report-md <file>',
      'write a Markdown report (counts, credits, failed checks with what came back); also appended to $GITHUB_STEP_SUMMARY when set',
    )
    .option('--junit <file>', 'write a JUnit XML report: one test case per check')
    .action(async (options: CheckCliOptions, cmd: Command) => {
      const startedMs = Date.now();
      // The report targets checked before anything is spent; a check that fails before its report (checks
      // file, config, state, service): the report says so.
      const { reportingFailures } = await import('../ci-report/from-failure.js');
      await reportingFailures('kbsync check', options, ctx, (onReported) => checkCommand(cmd, ctx, options, startedMs, onReported));
    });
}

/** The check itself; `onReported` once its CI reports are written. */
async function checkCommand(
  cmd: Command,
  ctx: CliContext,
  options: CheckCliOptions,
  startedMs: number,
  onReported: () => void,
): Promise<void> {
  const { loadChecks } = await import('../../sync/check/questions.js');
  // A bad checks file is refused before the state or the service is touched.
  const checks = loadChecks(resolve(ctx.cwd, options.questions));
  await withGuestSession(cmd, ctx, async (session) => {
    const { getClient, state, config } = session;
    const { capsOf } = await import('../../sync/executor/prepare.js');
    const { askChecks, planCheckCalls } = await import('../../sync/check/run-checks.js');
    const { evaluateCheck } = await import('../../sync/check/evaluate.js');
    const { sourceIndex } = await import('../../sync/source-index.js');
    const { checkReport, formatCheck } = await import('../../sync/report/format-check.js');
    const client = await getClient();
    // Free, and first: an unreachable service fails here, before anything is paid.
    const listing = await client.listAllFiles();
    // Before the paid calls too: the intelligence records, to name the entries that come back.
    const entries = await entryRecords(session);
    const calls = planCheckCalls(checks, options.topK, isAdvancedPlan(config.target.plan));
    const answers = await askChecks({ state, caps: capsOf(config), client }, checks, calls);
    const index = sourceIndex({
      tracked: state.loadTrackedFiles().values(),
      listing,
      sourceNames: fileSourceNames(config.sources),
      ...(entries === null ? {} : { entries: { records: entries, tracked: state.trackedEntries() } }),
    });
    const outcomes = checks.map((c, i) =>
      evaluateCheck(c, c.topK ?? options.topK, answers.results[i] ?? [], index.refOf, index.currentPaths),
    );
    const report = checkReport({
      questionsFile: options.questions,
      checkedAt: new Date(),
      outcomes,
      calls: calls.calls.length,
      batched: calls.batched,
      creditsPlanned: calls.credits,
      creditsSpent: answers.creditsSpent,
    });
    if (options.json === true) writeJson(ctx, report);
    else writeLines(ctx, formatCheck(report));
    const { checkCiReports } = await import('../ci-report/command-reports.js');
    await checkCiReports(session, report, options, startedMs);
    onReported();
    if (report.summary.failed > 0) ctx.exitCode = EXIT.itemsFailed;
  });
}

/**
 * With intelligence sources, their entries as the entry files hold them now (read as a plan reads
 * them, free: no call), so that an expected `source/file#key` can be matched as `kbsync explain`
 * resolves it; else null.
 */
async function entryRecords(session: Session): Promise<EntryRecordRef[] | null> {
  const sources = session.config.sources.filter(isIntelligenceSource);
  if (sources.length === 0) return null;
  const { readIntelligenceSources } = await import('../../sync/intelligence/read.js');
  const read = await readIntelligenceSources(sources, dirname(localStatePath(session.config)));
  return read.entries.map((e) => ({ source: e.source, path: e.path, sha256: e.sha256 }));
}
