import { ConfigError, formatProblem } from '../../config/errors.js';
import { errorText, isKbsyncError } from '../../shared/errors.js';
import type { CliContext } from '../context.js';
import type { CiReport } from './model.js';
import { checkCiReportTargets, writeCiReports, type CiReportOptions } from './write.js';

/**
 * The CI report of a command that failed before it had a result to report (a bad config or checks
 * file, the state unavailable or locked, the target unreachable, the run itself dying): one case in
 * error, named after the command, whose message is the error's code and text as kbsync printed it.
 * No counts, no credits: nothing is known of them.
 */
export function failureCiReport(title: string, err: unknown, o: { startedAt: string; durationMs: number }): CiReport {
  const code = isKbsyncError(err) ? err.code : 'internal';
  // A config error names each problem (file, line, key), as kbsync prints them.
  const text = err instanceof ConfigError ? err.problems.map((p) => formatProblem(err.file, p)).join('; ') : errorText(err);
  // A case's message is one line: an error of several (a checks file's problems) is joined.
  const message = `${code}: ${text.replace(/\s*\n\s*/g, ' ')}`;
  return {
    title,
    counts: [],
    credits: null,
    notes: [`${title} failed before it finished: ${message}`],
    cases: [{ suite: title, name: title.replace(/^kbsync /, ''), status: 'error', message }],
    notListed: [],
    startedAt: o.startedAt,
    durationMs: o.durationMs,
  };
}

/**
 * Runs a command that writes CI reports (`sync`, `check`, `audit`). First, before the command does (or
 * pays for) anything, checks that each report asked for can be written (checkCiReportTargets: a usage
 * error otherwise). Then, when the command fails before it has
 * written them, writes the failure's reports (failureCiReport) before the error goes on to be printed
 * with its exit code. `command` calls `onReported` once its own reports are written: a failure after
 * that leaves them as they are. A failure report that cannot be written is left: the error that ended
 * the command is the one to report, and its exit code stands.
 */
export async function reportingFailures(
  title: string,
  opts: CiReportOptions,
  ctx: CliContext,
  command: (onReported: () => void) => Promise<void>,
): Promise<void> {
  await checkCiReportTargets(opts, ctx);
  const startedMs = Date.now();
  let reported = false;
  try {
    await command(() => (reported = true));
  } catch (err) {
    if (!reported && (opts.reportMd !== undefined || opts.junit !== undefined)) {
      const report = failureCiReport(title, err, { startedAt: new Date(startedMs).toISOString(), durationMs: Date.now() - startedMs });
      await writeCiReports(opts, report, ctx).catch(() => {});
    }
    throw err;
  }
}
