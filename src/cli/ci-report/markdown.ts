import { failuresOf, skippedOf, type CiCase, type CiReport } from './model.js';

/**
 * Rows per table: a step summary is limited (1 MiB per step on GitHub) and nobody reads ten thousand
 * rows there; the JUnit report lists every case.
 */
export const MAX_MD_ROWS = 200;

/**
 * The report as GitHub-flavoured Markdown: a heading, a table of counts, a table of credits, the
 * notes, a table of failures and a table of skipped cases with their reasons (each up to MAX_MD_ROWS
 * rows). Every cell is escaped: a path with `|`, `*` or `<` shows as written.
 */
export function ciMarkdown(report: CiReport): string {
  const out: string[] = [`## ${escapeMd(report.title)}`, ''];
  const failures = failuresOf(report);
  out.push(failures.length === 0 ? 'No failures.' : `**${failures.length} failed.**`, '');
  if (report.counts.length > 0) {
    out.push(
      ...table(
        report.counts.map((c) => c.label),
        [report.counts.map((c) => String(c.value))],
        'right',
      ),
      '',
    );
  }
  if (report.credits !== null) {
    const { spent, reserved, left } = report.credits;
    out.push(
      ...table(
        ['credits spent', 'reserved', 'left'],
        [[String(spent), String(reserved), left === null ? 'unknown' : String(left)]],
        'right',
      ),
      '',
    );
  }
  const notes = [...report.notes, ...report.notListed];
  if (notes.length > 0) out.push(...notes.map((n) => `- ${escapeMd(n)}`), '');
  const multi = new Set(report.cases.map((c) => c.suite)).size > 1;
  if (failures.length > 0) {
    out.push(`### Failures (${failures.length})`, '');
    out.push(...caseTable(failures, multi, ['status', 'message'], (c) => [c.status, c.message ?? '']), '');
  }
  const skipped = skippedOf(report);
  if (skipped.length > 0) {
    out.push(`### Skipped (${skipped.length})`, '');
    out.push(...caseTable(skipped, multi, ['reason'], (c) => [c.message ?? '']), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function caseTable(cases: readonly CiCase[], multi: boolean, extra: string[], cells: (c: CiCase) => string[]): string[] {
  const head = [...(multi ? ['suite'] : []), 'name', ...extra];
  const rows = cases.slice(0, MAX_MD_ROWS).map((c) => [...(multi ? [c.suite] : []), c.name, ...cells(c)]);
  const lines = table(head, rows, 'left');
  if (cases.length > MAX_MD_ROWS) lines.push('', `… and ${cases.length - MAX_MD_ROWS} more (the JUnit report lists every case).`);
  return lines;
}

function table(head: readonly string[], rows: readonly (readonly string[])[], align: 'left' | 'right'): string[] {
  const line = (cells: readonly string[]): string => `| ${cells.map(escapeMd).join(' | ')} |`;
  return [line(head), `|${head.map(() => (align === 'right' ? ' ---: ' : ' --- ')).join('|')}|`, ...rows.map(line)];
}

/**
 * Text that Markdown shows as written, on one line: the ASCII punctuation Markdown or a table reads
 * (emphasis, links, code, HTML, entities, headings, `|`) is backslash-escaped, line breaks become spaces.
 */
export function escapeMd(text: string): string {
  return text.replace(/\r\n|[\r\n]/g, ' ').replace(/[\\`*_[\]<>#|~&]/g, (c) => `\\${c}`);
}
