import type { CheckOutcome } from '../check/evaluate.js';
import { plural } from '../planner/format.js';
import { columns } from './columns.js';
import { printable } from '../../shared/printable.js';

/** What `kbsync check` reports (its `--json` document): one outcome per check, in file order, and the totals. */
export type CheckReport = {
  kind: 'check';
  /** The checks file as given on the command line. */
  questionsFile: string;
  checkedAt: string;
  summary: {
    checks: number;
    passed: number;
    failed: number;
    /** Paid calls made: one per check, or one per batch of up to 20 on an Advanced-tier plan. */
    calls: number;
    batched: boolean;
    creditsPlanned: number;
    creditsSpent: number;
  };
  checks: CheckOutcome[];
};

/** Builds the report from the outcomes and what the calls cost. */
export function checkReport(input: {
  questionsFile: string;
  checkedAt: Date;
  outcomes: CheckOutcome[];
  calls: number;
  batched: boolean;
  creditsPlanned: number;
  creditsSpent: number;
}): CheckReport {
  const passed = input.outcomes.filter((o) => o.passed).length;
  return {
    kind: 'check',
    questionsFile: input.questionsFile,
    checkedAt: input.checkedAt.toISOString(),
    summary: {
      checks: input.outcomes.length,
      passed,
      failed: input.outcomes.length - passed,
      calls: input.calls,
      batched: input.batched,
      creditsPlanned: input.creditsPlanned,
      creditsSpent: input.creditsSpent,
    },
    checks: input.outcomes,
  };
}

/** Results listed under a failed check, to show what came back instead. */
const RESULTS_SHOWN = 5;

/**
 * The report for people: a line per check (pass or fail, the question, each expected path with the
 * rank it was found at), the results that came back under a failed one, then the totals.
 */
export function formatCheck(r: CheckReport): string {
  const lines: string[] = [];
  const rows = r.checks.map((c) => [c.passed ? 'pass' : 'FAIL', quote(c.question), c.expected.map(expectText).join('; ')]);
  const laidOut = columns(rows, ['left', 'left', 'left']);
  r.checks.forEach((c, i) => {
    lines.push(laidOut[i] as string);
    if (c.passed) return;
    if (c.results.length === 0) lines.push('      no results');
    for (const h of c.results.slice(0, RESULTS_SHOWN)) {
      const name = h.names.length > 0 ? h.names.map(printable).join(', ') : `id ${h.id}`;
      const copy = h.copy === 'current' ? '' : ` (${h.copy} copy)`;
      lines.push(`      ${h.rank}. ${name}${copy}  score ${h.score.toFixed(3)}`);
    }
  });
  const s = r.summary;
  const how = s.batched ? plural(s.calls, 'batch query', 'batch queries') : plural(s.calls, 'query', 'queries');
  lines.push(
    '',
    `${plural(s.checks, 'check')}: ${s.passed} passed, ${s.failed} failed; ${plural(s.creditsSpent, 'credit')} spent (${how})`,
  );
  return lines.join('\n');
}

function expectText(e: CheckOutcome['expected'][number]): string {
  return e.rank !== null ? `${e.expect} @${e.rank}` : `${e.expect}: ${e.note ?? 'not found'}`;
}

/** Questions are shortened to fit the column (columns() caps a column at 48 characters, quotes included). */
const QUESTION_MAX = 46;

function quote(question: string): string {
  const q = question.replace(/\s+/g, ' ');
  return `"${q.length > QUESTION_MAX ? `${q.slice(0, QUESTION_MAX - 1)}…` : q}"`;
}
