import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, stringify, visit, type Document, type Node } from 'yaml';
import type { ConfigPath, ConfigProblem } from './errors.js';
import { formatPath } from './errors.js';
import { interpolate, type Env } from './interpolate.js';

/** A scalar whose value came (partly) from environment variables. */
export type Interpolation = { path: ConfigPath; variables: readonly string[] };

/** A parsed, interpolated config file that still knows where each value was written. */
export type YamlSource = {
  /** The document as plain data (an empty file is `{}`); undefined after a syntax error. */
  data: unknown;
  /** YAML syntax errors and interpolation problems, each with its line. */
  problems: ConfigProblem[];
  interpolations: Interpolation[];
  /** The line of the node at `path`, or of its nearest existing parent. */
  lineOf(path: ConfigPath): number;
};

/** Parses YAML text keeping node positions, and expands `${VAR}` references in string scalars. */
export function readYamlSource(text: string, env: Env): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  const lineAt = (offset: number): number => lineCounter.linePos(offset).line;
  const lineOf = (path: ConfigPath): number => findLine(doc, path, lineAt);
  if (doc.errors.length > 0) {
    // An error "at the end" (an unclosed bracket) points one past the last line; show the last line.
    const lastLine = Math.max(1, text.replace(/\n$/, '').split('\n').length);
    const problems: ConfigProblem[] = [];
    for (const e of doc.errors) {
      const open = /^Flow (sequence|map)\b/.test(e.message) ? unclosedFlowBefore(doc, text, e.pos[0]) : undefined;
      if (open !== undefined) {
        // The parser reads every line after an unclosed [ or { as part of it: one problem, at the bracket.
        const bracket = text[open] ?? '[';
        problems.push({ path: '', line: lineAt(open), message: `${syntaxMessage(e.message)} (the ${bracket} on this line is not closed)` });
        break;
      }
      problems.push({ path: '', line: Math.min(e.linePos?.[0].line ?? 1, lastLine), message: syntaxMessage(e.message) });
    }
    return { data: undefined, problems, interpolations: [], lineOf };
  }
  const problems: ConfigProblem[] = [];
  const interpolations: Interpolation[] = [];
  walkScalars(doc.contents, [], (node, path) => {
    if (typeof node.value !== 'string' || !node.value.includes('$')) return;
    const result = interpolate(node.value, env);
    const line = node.range ? lineAt(node.range[0]) : lineOf(path);
    for (const message of result.problems) problems.push({ path: formatPath(path), line, message });
    if (result.variables.length > 0) interpolations.push({ path, variables: result.variables });
    // An unquoted `${N:-500}` should behave like an unquoted 500: re-read plain scalars as YAML would.
    node.value = node.type === 'PLAIN' && result.variables.length > 0 ? plainScalarValue(result.value) : result.value;
  });
  const data: unknown = doc.contents === null ? {} : doc.toJS({ maxAliasCount: 100 });
  return { data, problems, interpolations, lineOf };
}

type ScalarNode = { value: unknown; type?: string | undefined; range?: readonly [number, number, number] | null | undefined };

function walkScalars(node: unknown, path: ConfigPath, visit: (node: ScalarNode, path: ConfigPath) => void): void {
  if (isScalar(node)) {
    visit(node, path);
  } else if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      walkScalars(pair.value, [...path, key], visit);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => walkScalars(item, [...path, i], visit));
  }
}

function findLine(doc: Document, path: ConfigPath, lineAt: (offset: number) => number): number {
  let node: unknown = doc.contents;
  let line = isNodeWithRange(node) ? lineAt(node.range[0]) : 1;
  for (const seg of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg));
      if (pair === undefined) break;
      const at = isNodeWithRange(pair.key) ? pair.key : pair.value;
      if (isNodeWithRange(at)) line = lineAt(at.range[0]);
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item: unknown = node.items[seg];
      if (item === undefined) break;
      if (isNodeWithRange(item)) line = lineAt(item.range[0]);
      node = item;
    } else {
      break;
    }
  }
  return line;
}

function isNodeWithRange(node: unknown): node is Node & { range: [number, number, number] } {
  return typeof node === 'object' && node !== null && Array.isArray((node as { range?: unknown }).range);
}

/** What YAML 1.2 (core schema) makes of an unquoted scalar: a number, boolean or null, else the text. */
function plainScalarValue(text: string): unknown {
  if (/^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number(text);
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  if (/^(null|Null|NULL|~)$/.test(text)) return null;
  return text;
}

/** The offset of the last flow collection (`[`, `{`) opened before `offset` and never closed, if any. */
function unclosedFlowBefore(doc: Document, text: string, offset: number): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Collection(_key, node) {
      const range = node.range;
      if (!node.flow || range == null || range[0] >= offset) return;
      const close = text[range[0]] === '{' ? '}' : ']';
      if (text.slice(range[0], range[1]).trimEnd().endsWith(close)) return;
      if (found === undefined || range[0] > found) found = range[0];
    },
  });
  return found;
}

/** The yaml package's first message line, without its own " at line N, column M:" suffix. */
function syntaxMessage(message: string): string {
  const first = message.split('\n')[0] ?? message;
  return `YAML syntax: ${first.replace(/ at line \d+, column \d+:?$/, '')}`;
}

/**
 * A value as YAML text. Here, with this module's static import of `yaml`: in the bundle, a dynamic
 * `import('yaml')` of that CommonJS package gives only a default export (no named `stringify`).
 */
export function toYaml(value: unknown): string {
  return stringify(value);
}
