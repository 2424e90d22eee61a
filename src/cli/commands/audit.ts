import type { Command } from 'commander';
import { fileSourceNames, isIntelligenceSource } from '../../config/source-kinds.js';
import type { EntryAuditInput } from '../../sync/audit/compare-entries.js';
import type { EntryCandidate } from '../../sync/intelligence/read.js';
import type { CiReportOptions } from '../ci-report/index.js';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit.js';
import { writeJson, writeLines } from '../output.js';
import { withReaderSession, type Session } from '../session.js';
import { printable } from '../../shared/printable.js';

type AuditCliOptions = { json?: boolean; failOnDrift?: boolean } & CiReportOptions;

/**
 * `kbsync audit`: compares the sources (a walk), the state and the dataset's file listing, and lists
 * the drift: remote files the state does not know, tracked files missing remotely, copies made stale
 * by a change or a deletion, files not synced, copies stuck processing or failed; with intelligence
 * sources, their entries too (compare-entries.ts). Free: listings only.
 */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('audit')
    .description(
      'compare the sources, the state and the remote listing: untracked remote files, tracked files missing remotely, stale copies, deleted files whose copy remains, files not synced, processing or failed; the same for intelligence entries (free: listings only)',
    )
    .option('--json', 'print one JSON document: {"summary": {...}, "items": [...]}')
    .option('--fail-on-drift', 'exit 1 when anything is found (default: exit 0 whatever is found)')
    .option('--report-md <file>', 'write a Markdown report (counts, findings by kind); also appended to $GITHUB_STEP_SUMMARY when set')
    .option('--junit <file>', 'write a JUnit XML report: one failed test case per finding, a suite per kind (one passed case when clean)')
    .action(async (options: AuditCliOptions, cmd: Command) => {
      const startedMs = Date.now();
      // The report targets checked first; an audit that fails before its report (config, state, service): the report says so.
      const { reportingFailures } = await import('../ci-report/from-failure.js');
      await reportingFailures('kbsync audit', options, ctx, (onReported) => auditCommand(cmd, ctx, options, startedMs, onReported));
    });
}

/** The audit itself; `onReported` once its CI reports are written. */
async function auditCommand(
  cmd: Command,
  ctx: CliContext,
  options: AuditCliOptions,
  startedMs: number,
  onReported: () => void,
): Promise<void> {
  await withReaderSession(cmd, ctx, async (session) => {
    const { auditDataset } = await import('../../sync/audit/compare.js');
    const { formatAudit } = await import('../../sync/report/format-audit.js');
    const prepared = await walkAndState(session, ctx);
    // A listing the plan fetched (to rebuild or settle the state) is used as it is; else it is read a page at a time.
    const listing = prepared.listing !== null ? [prepared.listing] : (await session.getClient()).filePages();
    // From here on the walk and the state are held as they are, and each page of the listing is garbage once compared.
    (await import('../../service/memory.js')).keepHeapNearLiveSet();
    const entries = await entryAuditInput(session, prepared.entryContents.values());
    const report = await auditDataset({
      observed: prepared.observed,
      counted: prepared.counted,
      skipped: prepared.skipped,
      tracked: prepared.tracked,
      listing,
      sourceNames: fileSourceNames(session.config.sources),
      maxFileBytes: prepared.maxFileBytes,
      now: new Date(),
      ...(entries === null ? {} : { entries }),
    });
    if (options.json === true) writeJson(ctx, report);
    else writeLines(ctx, formatAudit(report));
    const { auditCiReports } = await import('../ci-report/command-reports.js');
    await auditCiReports(session, report, options, startedMs);
    onReported();
    if (options.failOnDrift === true && report.summary.drift > 0) ctx.exitCode = EXIT.itemsFailed;
  });
}

/**
 * The walk and the state as `kbsync plan` sees them (a lost state rebuilt from the listing first),
 * without the plan itself: the audit reads only its size limit. The files unchanged since the state's
 * record are counted as `kbsync plan` counts them (their rows flagged), not listed.
 */
async function walkAndState(session: Session, ctx: CliContext) {
  const { preparePlan } = await import('../../sync/executor/prepare.js');
  const prepared = await preparePlan(session, null, { countUnchanged: true });
  for (const note of prepared.notes) ctx.stderr.write(`kbsync: ${printable(note)}\n`);
  return {
    observed: prepared.observation.files,
    skipped: prepared.observation.skipped,
    tracked: prepared.tracked,
    counted: prepared.unlisted?.rows ?? null,
    listing: prepared.listing,
    entryContents: prepared.entryContents,
    maxFileBytes: prepared.plan.limits.effectiveMaxFileBytes,
  };
}

/** With intelligence sources, what the entry audit compares: the records read now, the state's entries and the entry listing (free); else null. */
async function entryAuditInput(session: Session, records: Iterable<EntryCandidate>): Promise<EntryAuditInput | null> {
  if (!session.config.sources.some(isIntelligenceSource)) return null;
  const { listAllEntries } = await import('../../sync/intelligence/reconcile.js');
  const listing = await listAllEntries(await session.getClient());
  return { local: [...records], tracked: session.state.trackedEntries(), listing };
}
