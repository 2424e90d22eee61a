import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { Lexer, type Tokens } from 'marked';
import { validateXML } from 'xmllint-wasm';
import { REPO_ROOT } from './build-dist.js';

/** The JUnit schema the tests validate against (see its header for where its structure comes from). */
const JUNIT_XSD = readFileSync(join(REPO_ROOT, 'test/fixtures/junit/junit.xsd'), 'utf8');

/** libxml2's (xmllint's, built to WebAssembly) complaints about `xml` against test/fixtures/junit/junit.xsd: [] when valid. */
export async function junitSchemaErrors(xml: string): Promise<string[]> {
  const result = await validateXML({
    xml: { fileName: 'report.xml', contents: xml },
    schema: { fileName: 'junit.xsd', contents: JUNIT_XSD },
  });
  return result.valid ? [] : result.errors.map((e) => e.rawMessage);
}

/** One parsed `<testcase>`: its attributes, which outcome element it has, and that element's message. */
export type ParsedCase = {
  suite: string;
  name: string;
  classname: string;
  outcome: 'passed' | 'failure' | 'error' | 'skipped';
  message: string | null;
  systemOut: string | null;
};

type XmlEl = Record<string, unknown>;

/** A JUnit document read back with an XML parser: the root's and each suite's attributes, every case. */
export function parseJunit(xml: string): { root: XmlEl; suites: XmlEl[]; cases: ParsedCase[] } {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    // Character references too (&#10; in an attribute is a line break kept as written).
    htmlEntities: true,
    isArray: (name) => ['testsuite', 'testcase', 'property'].includes(name),
  });
  const doc = parser.parse(xml, true) as { testsuites: XmlEl & { testsuite?: XmlEl[] } };
  const suites = doc.testsuites.testsuite ?? [];
  const cases = suites.flatMap((s) =>
    ((s.testcase as XmlEl[] | undefined) ?? []).map((c): ParsedCase => {
      const outcome = (['failure', 'error', 'skipped'] as const).find((k) => c[k] !== undefined) ?? 'passed';
      const el = outcome === 'passed' ? undefined : (c[outcome] as XmlEl | string);
      const message = el === undefined ? null : typeof el === 'string' ? '' : ((el.message as string | undefined) ?? null);
      return {
        suite: s.name as string,
        name: c.name as string,
        classname: c.classname as string,
        outcome,
        message,
        systemOut: (c['system-out'] as string | undefined) ?? null,
      };
    }),
  );
  return { root: doc.testsuites, suites, cases };
}

/** A Markdown document read back by structure (marked's GFM lexer): its headings, tables (cells as plain text) and list items. */
export function parseMarkdown(md: string): {
  headings: string[];
  tables: { header: string[]; rows: string[][] }[];
  list: string[];
  paragraphs: string[];
} {
  const tokens = new Lexer({ gfm: true }).lex(md);
  const out = {
    headings: [] as string[],
    tables: [] as { header: string[]; rows: string[][] }[],
    list: [] as string[],
    paragraphs: [] as string[],
  };
  for (const t of tokens) {
    if (t.type === 'heading') out.headings.push(plain((t as Tokens.Heading).tokens));
    else if (t.type === 'paragraph') out.paragraphs.push(plain((t as Tokens.Paragraph).tokens));
    else if (t.type === 'list') out.list.push(...(t as Tokens.List).items.map((i) => plain(i.tokens)));
    else if (t.type === 'table') {
      const table = t as Tokens.Table;
      out.tables.push({ header: table.header.map((c) => plain(c.tokens)), rows: table.rows.map((r) => r.map((c) => plain(c.tokens))) });
    }
  }
  return out;
}

/** The text a reader sees: escapes resolved, emphasis and code kept as their text. */
function plain(tokens: readonly Tokens.Generic[] | undefined): string {
  return (tokens ?? [])
    .map((t) => {
      if (t.type === 'escape') return (t as Tokens.Escape).text;
      if (t.type === 'text' && 'tokens' in t && t.tokens !== undefined) return plain(t.tokens as Tokens.Generic[]);
      if (t.type === 'strong' || t.type === 'em' || t.type === 'del' || t.type === 'link' || t.type === 'paragraph')
        return `<${t.type}>${plain(t.tokens as Tokens.Generic[])}</${t.type}>`;
      if (t.type === 'html') return `<html>${(t as Tokens.HTML).text}</html>`;
      if (t.type === 'codespan') return `<code>${(t as Tokens.Codespan).text}</code>`;
      return (t as { text?: string }).text ?? '';
    })
    .join('');
}
