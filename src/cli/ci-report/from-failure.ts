import { ConfigError, formatProblem } from '../../config/errors.js';
import { errorText, isKbsyncError } from '../../shared/errors.js';
import type { CiReport } from './model.js';

/**
 * The CI report of a command that failed before it had a result to report (a bad config, the state
 * unavailable or locked, the target unreachable, the run itself dying): one case in error, named after
 * the command, whose message is the error's code and text as kbsync printed it. No counts, no credits:
 * nothing is known of them.
 */
export function failureCiReport(title: string, err: unknown, o: { startedAt: string; durationMs: number }): CiReport {
  const code = isKbsyncError(err) ? err.code : 'internal';
  // A config error names each problem (file, line, key), as kbsync prints them.
  const text = err instanceof ConfigError ? err.problems.map((p) => formatProblem(err.file, p)).join('; ') : errorText(err);
  const message = `${code}: ${text}`;
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
