import { errorText } from '../../../shared/errors.js';
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
