import type { CiCase, CiReport } from './model.js';

/**
 * The report as JUnit XML, in the shape of the common Ant/Jenkins schema (junit-10.xsd; the restriction
 * of it the tests validate against is test/fixtures/junit/junit.xsd): `<testsuites>` named after the
 * report, one `<testsuite>` per case suite (a source, or `check`), one `<testcase>` per case with a
 * `<failure>`, `<error>` or `<skipped>` carrying its message, or its message as `<system-out>` when it
 * passed. The first suite also carries the counts and credits as `<properties>`, and the notes and
 * what is not listed as its `<system-out>`. A report without cases still has one (empty) suite.
 *
 * Written by hand, not with fast-xml-parser's XMLBuilder: escaping is the five entities (and line
 * breaks in attributes), and for the cases of a first sync of a large tree the builder took several
 * times the time and memory this does. Characters XML 1.0 cannot hold at all
 * (controls, lone surrogates) become U+FFFD.
 */
export function ciJunit(report: CiReport): string {
  const bySuite = new Map<string, CiCase[]>();
  for (const c of report.cases) {
    const list = bySuite.get(c.suite);
    if (list === undefined) bySuite.set(c.suite, [c]);
    else list.push(c);
  }
  if (bySuite.size === 0) bySuite.set(report.title, []);
  const total = tally(report.cases);
  const time = report.durationMs !== undefined ? ` time="${seconds(report.durationMs)}"` : '';
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${attr(report.title)}" tests="${total.tests}" failures="${total.failures}" errors="${total.errors}"${time}>`,
  ];
  let first = true;
  for (const [name, cases] of bySuite) {
    suiteLines(out, report, name, cases, first);
    first = false;
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

function suiteLines(out: string[], report: CiReport, name: string, cases: readonly CiCase[], first: boolean): void {
  const t = tally(cases);
  const time = t.timed ? ` time="${seconds(t.durationMs)}"` : '';
  const timestamp = report.startedAt !== undefined ? ` timestamp="${attr(report.startedAt)}"` : '';
  out.push(
    `  <testsuite name="${attr(name)}" tests="${t.tests}" failures="${t.failures}" errors="${t.errors}" skipped="${t.skipped}"${time}${timestamp}>`,
  );
  if (first) {
    const props = report.counts.map((c) => [c.label, String(c.value)] as const);
    const credits = report.credits;
    const all =
      credits === null
        ? props
        : [
            ...props,
            ['credits.spent', String(credits.spent)] as const,
            ['credits.reserved', String(credits.reserved)] as const,
            ['credits.left', credits.left === null ? 'unknown' : String(credits.left)] as const,
          ];
    if (all.length > 0) {
      out.push('    <properties>');
      for (const [k, v] of all) out.push(`      <property name="${attr(k)}" value="${attr(v)}"/>`);
      out.push('    </properties>');
    }
  }
  for (const c of cases) out.push(caseXml(c));
  const notes = first ? [...report.notes, ...report.notListed] : [];
  if (notes.length > 0) out.push(`    <system-out>${text(notes.join('\n'))}</system-out>`);
  out.push('  </testsuite>');
}

function caseXml(c: CiCase): string {
  const time = c.durationMs !== undefined ? ` time="${seconds(c.durationMs)}"` : '';
  const open = `    <testcase name="${attr(c.name)}" classname="${attr(c.suite)}"${time}`;
  const message = c.message ?? '';
  if (c.status === 'failed')
    return `${open}>\n      <failure message="${attr(message)}" type="failed">${text(message)}</failure>\n    </testcase>`;
  if (c.status === 'error')
    return `${open}>\n      <error message="${attr(message)}" type="error">${text(message)}</error>\n    </testcase>`;
  if (c.status === 'skipped') return `${open}>\n      <skipped message="${attr(message)}"/>\n    </testcase>`;
  if (message !== '') return `${open}>\n      <system-out>${text(message)}</system-out>\n    </testcase>`;
  return `${open}/>`;
}

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const ATTR_ESCAPES: Record<string, string> = { ...TEXT_ESCAPES, '"': '&quot;', "'": '&apos;', '\n': '&#10;', '\r': '&#13;', '\t': '&#9;' };

/** Element text: XML 1.0 characters only, `&`, `<` and `>` as entities. */
function text(value: string): string {
  return xmlText(value).replace(/[&<>]/g, (ch) => TEXT_ESCAPES[ch] as string);
}

/** An attribute value in double quotes: also quotes as entities, and line breaks and tabs as character references (kept as written). */
function attr(value: string): string {
  return xmlText(value).replace(/[&<>"'\n\r\t]/g, (ch) => ATTR_ESCAPES[ch] as string);
}

function tally(cases: readonly CiCase[]): {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  timed: boolean;
  durationMs: number;
} {
  const t = { tests: cases.length, failures: 0, errors: 0, skipped: 0, timed: false, durationMs: 0 };
  for (const c of cases) {
    if (c.status === 'failed') t.failures += 1;
    else if (c.status === 'error') t.errors += 1;
    else if (c.status === 'skipped') t.skipped += 1;
    if (c.durationMs !== undefined) {
      t.timed = true;
      t.durationMs += c.durationMs;
    }
  }
  return t;
}

/** Seconds with up to three decimals, as JUnit's `time` wants them ("1.5", "0.012"). */
function seconds(ms: number): string {
  return String(Math.round(Math.max(0, ms)) / 1000);
}

/** Text XML 1.0 can hold: every character outside its Char production becomes U+FFFD. */
export function xmlText(text: string): string {
  return text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD');
}
