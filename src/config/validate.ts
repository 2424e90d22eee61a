import type { z } from 'zod';
import type { ConfigPath, ConfigProblem } from './errors.js';
import { formatPath } from './errors.js';
import { Config } from './schema.js';
import { defOf, schemaAt, shapeOf, unwrap } from './schema-walk.js';
import { closest } from './suggest.js';
import { isRecord } from './is-record.js';

type Issue = z.core.$ZodIssue;

/** The schema's verdict on plain data: the config, or every problem with its line. */
export function validateConfig(
  data: unknown,
  lineOf: (path: ConfigPath) => number,
): { config: Config | undefined; problems: ConfigProblem[] } {
  const normalised = dropEmptySections(data);
  const result = Config.safeParse(normalised);
  if (result.success) return { config: result.data, problems: [] };
  const problems = result.error.issues.flatMap((issue) => problemsOf(issue, normalised, lineOf));
  return { config: undefined, problems };
}

/**
 * `budget:` with every line under it commented out is null in YAML; treat such an empty section
 * (an object or list that has a default) as absent rather than as a type error.
 */
function dropEmptySections(data: unknown): unknown {
  if (!isRecord(data)) return data;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const field = schemaAt(Config, [key]);
    const kind = field === undefined ? undefined : defOf(unwrap(field)).type;
    const hasDefault = field !== undefined && ['default', 'prefault'].includes(defOf(field).type);
    if (value === null && hasDefault && (kind === 'object' || kind === 'array')) continue;
    out[key] = isRecord(value) && kind === 'object' ? dropEmptyNested(value, [key]) : value;
  }
  return out;
}

function dropEmptyNested(value: Record<string, unknown>, path: ConfigPath): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const field = schemaAt(Config, [...path, key]);
    const hasObjectDefault = field !== undefined && defOf(field).type === 'prefault' && defOf(unwrap(field)).type === 'object';
    if (inner === null && hasObjectDefault) continue;
    out[key] = inner;
  }
  return out;
}

function problemsOf(issue: Issue, data: unknown, lineOf: (path: ConfigPath) => number): ConfigProblem[] {
  const path = issue.path.map((seg) => (typeof seg === 'number' ? seg : String(seg)));
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(shapeOf(schemaAt(Config, path) ?? Config) ?? {});
    return issue.keys.map((key) => {
      const hint = closest(key, known);
      return {
        path: formatPath([...path, key]),
        line: lineOf([...path, key]),
        message: hint === undefined ? `unknown key (known keys: ${known.join(', ')})` : `unknown key (did you mean "${hint}"?)`,
      };
    });
  }
  return [{ path: formatPath(path), line: lineOf(path), message: messageOf(issue, valueAt(data, path), isSecretPath(path)) }];
}

/** A sentence for one zod issue, in the user's terms (YAML words, the value they wrote). */
function messageOf(issue: Issue, value: unknown, secret: boolean): string {
  const got = secret ? '' : `, got ${describeValue(value)}`;
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return 'required';
      return `expected ${typeWord(issue.expected)}${got}`;
    case 'invalid_value': {
      const options = issue.values.map(String);
      const hint = typeof value === 'string' ? closest(value, options) : undefined;
      return `must be one of: ${options.join(', ')}${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`;
    }
    case 'too_small':
      if (issue.origin === 'string')
        return Number(issue.minimum) <= 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array') return `must have at least ${issue.minimum} items`;
      return `must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}${got}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array') return `must have at most ${issue.maximum} items`;
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}${got}`;
    case 'invalid_format':
      if (issue.format === 'url') return `must be an http:// or https:// URL${got}`;
      if (issue.format === 'starts_with' && 'prefix' in issue) return `must start with "${String(issue.prefix)}"${got}`;
      return `${issue.message}${got}`;
    case 'invalid_union': {
      const alternatives = issue.errors.map((branch) => (branch[0] === undefined ? 'invalid' : messageOf(branch[0], value, true)));
      return `${[...new Set(alternatives)].join(', or ')}${got}`;
    }
    default:
      return issue.message;
  }
}

function typeWord(expected: string): string {
  const words: Record<string, string> = {
    object: 'a mapping (key: value lines)',
    array: 'a list',
    string: 'a string',
    number: 'a number',
    int: 'a whole number',
    boolean: 'true or false',
    nan: 'a number',
  };
  return words[expected] ?? expected;
}

/** A short, safe rendering of what the user wrote. */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

/** Values under these keys are never echoed back in a message. */
function isSecretPath(path: ConfigPath): boolean {
  const last = path[path.length - 1];
  return typeof last === 'string' && /(key|token|secret|password)$/i.test(last);
}

function valueAt(data: unknown, path: ConfigPath): unknown {
  let current = data;
  for (const seg of path) {
    if (Array.isArray(current) && typeof seg === 'number') current = current[seg];
    else if (isRecord(current) && typeof seg === 'string') current = current[seg];
    else return undefined;
  }
  return current;
}
