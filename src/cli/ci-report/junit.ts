import { XMLBuilder } from 'fast-xml-parser';
import type { CiCase, CiReport } from './model.js';

type XmlNode = Record<string, unknown>;

/**
 * The report as JUnit XML, in the shape of the common Ant/Jenkins schema (junit-10.xsd; the restriction
 * of it the tests validate against is test/fixtures/junit/junit.xsd): `<testsuites>` named after the
 * report, one `<testsuite>` per case suite (a source, or `check`), one `<testcase>` per case with a
 * `<failure>`, `<error>` or `<skipped>` carrying its message, or its message as `<system-out>` when it
 * passed. The first suite also carries the counts and credits as `<properties>`, and the notes and
 * what is not listed as its `<system-out>`. A report without cases still has one (empty) suite.
 * Text and attributes are escaped by the builder; characters XML 1.0 cannot hold at all (controls,
 * lone surrogates) become U+FFFD.
 */
export function ciJunit(report: CiReport): string {
  const bySuite = new Map<string, CiCase[]>();
  for (const c of report.cases) {
    const list = bySuite.get(c.suite);
    if (list === undefined) bySuite.set(c.suite, [c]);
    else list.push(c);
  }
  if (bySuite.size === 0) bySuite.set(report.title, []);
  const suites = [...bySuite].map(([name, cases], i) => suiteNode(report, name, cases, i === 0));
  const total = tally(report.cases);
  const root: XmlNode = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    testsuites: {
      '@_name': xmlText(report.title),
      '@_tests': total.tests,
      '@_failures': total.failures,
      '@_errors': total.errors,
      ...(report.durationMs !== undefined ? { '@_time': seconds(report.durationMs) } : {}),
      testsuite: suites,
    },
  };
  const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, suppressEmptyNode: true });
  return builder.build(root) as string;
}

function suiteNode(report: CiReport, name: string, cases: readonly CiCase[], first: boolean): XmlNode {
  const t = tally(cases);
  const node: XmlNode = {
    '@_name': xmlText(name),
    '@_tests': t.tests,
    '@_failures': t.failures,
    '@_errors': t.errors,
    '@_skipped': t.skipped,
    ...(t.timed ? { '@_time': seconds(t.durationMs) } : {}),
    ...(report.startedAt !== undefined ? { '@_timestamp': report.startedAt } : {}),
  };
  if (first) {
    const props = report.counts.map((c) => [c.label, String(c.value)]);
    if (report.credits !== null) {
      const { spent, reserved, left } = report.credits;
      props.push(
        ['credits.spent', String(spent)],
        ['credits.reserved', String(reserved)],
        ['credits.left', left === null ? 'unknown' : String(left)],
      );
    }
    if (props.length > 0)
      node.properties = { property: props.map(([k, v]) => ({ '@_name': xmlText(k as string), '@_value': xmlText(v as string) })) };
  }
  node.testcase = cases.map(caseNode);
  const out = first ? [...report.notes, ...report.notListed] : [];
  if (out.length > 0) node['system-out'] = xmlText(out.join('\n'));
  return node;
}

function caseNode(c: CiCase): XmlNode {
  const node: XmlNode = { '@_name': xmlText(c.name), '@_classname': xmlText(c.suite) };
  if (c.durationMs !== undefined) node['@_time'] = seconds(c.durationMs);
  const message = xmlText(c.message ?? '');
  if (c.status === 'failed') node.failure = { '@_message': message, '@_type': 'failed', '#text': message };
  else if (c.status === 'error') node.error = { '@_message': message, '@_type': 'error', '#text': message };
  else if (c.status === 'skipped') node.skipped = { '@_message': message };
  else if (message !== '') node['system-out'] = message;
  return node;
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
