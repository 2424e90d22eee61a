import { errorText } from '../../../shared/errors.js';
import { jsonDepthOver, MAX_JSON_DEPTH } from './depth.js';
import { jsonErrorOffset } from './json-locate.js';

/** Line and column (1-based) of a character offset in text. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * JSON.parse's complaint with where it happened, the same on every Node version:
 * `line 3, column 9: Unexpected token '}'`. V8's message loses the quoted input (some versions
 * include it, which could be long); the place comes from our own scan of the text.
 */
export function describeJsonError(err: unknown, text: string): string {
  const raw = errorText(err);
  let what = raw
    .replace(/,\s*".*" is not valid JSON$/s, '')
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .trim();
  if (what.length > 200) what = `${what.slice(0, 200)}…`;
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return what;
  if (offset >= text.length) return `line ${lineColumnAt(text, text.length).line}: unexpected end of JSON`;
  const { line, column } = lineColumnAt(text, offset);
  return `line ${line}, column ${column}: ${what}`;
}

/**
 * Why JSON text nested past MAX_JSON_DEPTH is refused, with where (`line 1, column 513: ...`), or
 * undefined when it is within the limit. Checked before JSON.parse: the flattening recurses.
 */
export function jsonDepthProblem(text: string): string | undefined {
  const offset = jsonDepthOver(text, MAX_JSON_DEPTH);
  if (offset === undefined) return undefined;
  const { line, column } = lineColumnAt(text, offset);
  return `line ${line}, column ${column}: JSON arrays and objects nested more than ${MAX_JSON_DEPTH} deep, over kbsync's limit; flatten the data (or store the deep part as a string) and upload it again`;
}
