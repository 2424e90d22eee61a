import { isWithinTokenLimit } from 'gpt-tokenizer/encoding/cl100k_base';

/**
 * Token budgets, counted with the cl100k_base encoding (OpenAI's embedding models'). Counting is the
 * costly part of chunking (~20 MiB/s here), so it is done only where it can change the answer: a text
 * of n UTF-16 units holds at most 3n UTF-8 bytes, and a token is at least one byte, so a text with
 * 3n ≤ max is within budget without counting; any other is counted, stopping at the budget.
 */
export function withinTokens(text: string, max: number): boolean {
  if (text.length * 3 <= max) return true;
  return isWithinTokenLimit(text, max) !== false;
}

/** Boundaries tried, coarsest first, when a text over budget is cut in two. */
const CUTS = ['\n\n', '\n', '. ', ' '] as const;

/**
 * Emits `prefix + body` when it is within `maxTokens`; else cuts `body` in two near its middle, at the
 * coarsest boundary found there (paragraph, line, sentence, word; a plain cut as a last resort) and
 * does the same with each half, so that every emitted text is within budget and keeps `prefix` (the
 * heading path). `prefix` must itself be well within the budget.
 */
export function emitWithinTokens(prefix: string, body: string, maxTokens: number, emit: (text: string) => void): void {
  if (withinTokens(prefix + body, maxTokens) || body.length < 2) {
    emit(prefix + body);
    return;
  }
  const [first, second] = halve(body);
  if (first !== '') emitWithinTokens(prefix, first, maxTokens, emit);
  if (second !== '') emitWithinTokens(prefix, second, maxTokens, emit);
}

/** `text` in two parts, cut at the boundary nearest its middle (within the middle half), both trimmed. */
function halve(text: string): [string, string] {
  const mid = text.length >> 1;
  const reach = text.length >> 2;
  for (const cut of CUTS) {
    const before = text.lastIndexOf(cut, mid);
    const after = text.indexOf(cut, mid);
    const candidates = [before, after].filter((at) => at > 0 && Math.abs(at - mid) <= reach);
    if (candidates.length === 0) continue;
    const at = candidates.reduce((a, b) => (Math.abs(a - mid) <= Math.abs(b - mid) ? a : b));
    const first = text.slice(0, at + (cut === '. ' ? 1 : 0)).trim();
    const second = text.slice(at + cut.length).trim();
    if (first !== '' && second !== '') return [first, second];
  }
  let at = mid;
  const code = text.charCodeAt(at - 1);
  if (code >= 0xd800 && code <= 0xdbff) at--;
  return [text.slice(0, at), text.slice(at)];
}
