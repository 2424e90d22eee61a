/**
 * The typed model of a CI report, shared by the commands that write one (`sync`, and later `check` and
 * `audit`): what ran, how it counts, what it cost, and one test case per file action or check. The
 * writers (markdown.ts, junit.ts) read nothing else.
 */

/** How one test case ended, in JUnit's words: `error` when the outcome is not known (a lost answer), `failed` when it is a failure. */
export type CiCaseStatus = 'passed' | 'failed' | 'skipped' | 'error';

/** One file action or check. */
export type CiCase = {
  /** Groups cases (a JUnit `<testsuite>`): a source's name for sync, `check` for checks. */
  suite: string;
  /** The case's name: a path as the plan prints it, or a check's question. */
  name: string;
  status: CiCaseStatus;
  /** One line: why it was skipped, what failed, or what was done ("uploaded, 5 credits"). */
  message?: string;
  durationMs?: number;
};

/** Credits of the run: charged, still held by calls whose outcome is not known yet, and what the dataset has left (null: not known). */
export type CiCredits = { spent: number; reserved: number; left: number | null };

/** A CI report: a title, ordered counts, credits, notes, the cases, and a line for each kind of case left out. */
export type CiReport = {
  /** "kbsync sync": the heading of the Markdown and the name of the JUnit `<testsuites>`. */
  title: string;
  /** Counts in the order shown ("uploaded", "unchanged", ...). */
  counts: readonly { label: string; value: number }[];
  credits: CiCredits | null;
  /** Lines worth a reader's eye (the run stopped spending, --wait gave up...). */
  notes: readonly string[];
  cases: readonly CiCase[];
  /** A line for each kind of item counted but not listed as cases ("12 unchanged files not listed"). */
  notListed: readonly string[];
  /** When the run started (ISO 8601), and how long it took. */
  startedAt?: string;
  durationMs?: number;
};

/** The cases that failed (`failed` or `error`), in report order. */
export function failuresOf(report: Pick<CiReport, 'cases'>): CiCase[] {
  return report.cases.filter((c) => c.status === 'failed' || c.status === 'error');
}

/** The skipped cases, in report order. */
export function skippedOf(report: Pick<CiReport, 'cases'>): CiCase[] {
  return report.cases.filter((c) => c.status === 'skipped');
}
