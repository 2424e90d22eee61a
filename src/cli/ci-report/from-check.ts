import type { CheckOutcome } from '../../sync/check/evaluate.js';
import type { CheckReport } from '../../sync/report/format-check.js';
import type { CiCase, CiCredits, CiReport } from './model.js';

/** Results named in a failed check's message, to show what came back instead (as the text report does). */
const RESULTS_NAMED = 5;

/**
 * A finished `kbsync check` as a CI report: one case per check (suite `check`, named after its
 * question), in the checks file's order. A passed check's message gives the rank of each expected path;
 * a failed one's says which were found where, why the others were not, and what came back instead.
 * The counts are the checks, passed and failed, and the paid calls; the credits are what the queries cost.
 */
export function checkCiReport(report: CheckReport, o: { credits: CiCredits; durationMs?: number }): CiReport {
  const s = report.summary;
  return {
    title: 'kbsync check',
    counts: [
      { label: 'checks', value: s.checks },
      { label: 'passed', value: s.passed },
      { label: 'failed', value: s.failed },
      { label: s.batched ? 'batch queries' : 'queries', value: s.calls },
    ],
    credits: o.credits,
    notes: [`checks file: ${report.questionsFile}`],
    cases: report.checks.map(checkCase),
    notListed: [],
    startedAt: report.checkedAt,
    ...(o.durationMs === undefined ? {} : { durationMs: o.durationMs }),
  };
}

function checkCase(c: CheckOutcome): CiCase {
  const found = c.expected.map((e) => (e.rank !== null ? `${e.expect} @${e.rank}` : `${e.expect}: ${e.note ?? 'not found'}`)).join('; ');
  const head = `line ${c.line}, top ${c.topK}: ${found}`;
  if (c.passed) return { suite: 'check', name: c.question, status: 'passed', message: head };
  const came =
    c.results.length === 0
      ? 'no results came back'
      : `came back instead: ${c.results
          .slice(0, RESULTS_NAMED)
          .map(
            (h) => `${h.rank}. ${h.names.length > 0 ? h.names.join(', ') : `id ${h.id}`}${h.copy === 'current' ? '' : ` (${h.copy} copy)`}`,
          )
          .join(', ')}`;
  return { suite: 'check', name: c.question, status: 'failed', message: `${head}; ${came}` };
}
