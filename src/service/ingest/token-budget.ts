import { countTokens, isWithinTokenLimit } from 'gpt-tokenizer/encoding/cl100k_base';

/**
 * Token budgets, counted with the cl100k_base encoding (OpenAI's embedding models'). Counting is the
 * costly part of chunking (gpt-tokenizer is about as slow as the rest of ingest together),
 * so it is done only where it can change the answer: a text of n UTF-16 units holds at most 3n UTF-8
 * bytes, and a token is at least one byte, so a text with 3n ≤ max is within budget without counting.
 */
export function withinTokens(text: string, max: number): boolean {
  if (text.length * 3 <= max) return true;
  return isWithinTokenLimit(text, max) !== false;
}

/** Chunks of a file counted exactly before its estimates are trusted, and one in this many after. */
const EXACT_FIRST = 4;
const EXACT_EVERY = 16;
/**
 * The class estimate is trusted only this far below the budget: on the project's own docs (1,190 chunks
 * of 1,500 characters) it came to 0.96-1.5 times the real count, 1.13 at the median.
 */
const CLASS_MARGIN = 1.05;

/**
 * A per-file judge of "within budget": counts exactly the file's first chunks, one in EXACT_EVERY
 * after, and every chunk whose estimate comes near the budget; the others are estimated twice, both
 * within the budget: by the most tokens per character counted so far in this file (a file keeps to
 * one kind of text), and by character classes with CLASS_MARGIN (digits, punctuation and non-ASCII
 * text count more than letters), which catches a denser stretch the file's ratio has not seen.
 * An estimate, not a proof: text unlike the rest of its file and dense in a way the classes miss
 * (say, a paragraph of random letters) could pass over the budget uncounted.
 */
export type TokenGauge = {
  fits(text: string): boolean;
  /** The characters a chunk may pack so that its estimate stays within budget (at most `maxChars`). */
  charsFor(maxChars: number): number;
};

export function createTokenGauge(maxTokens: number): TokenGauge {
  let ratio = 0;
  let counted = 0;
  let seen = 0;
  return {
    fits(text) {
      if (text.length * 3 <= maxTokens) return true;
      seen++;
      const trusted = counted >= EXACT_FIRST && seen % EXACT_EVERY !== 0;
      if (trusted && text.length * ratio <= maxTokens && classEstimate(text) * CLASS_MARGIN <= maxTokens) return true;
      const tokens = countTokens(text);
      counted++;
      ratio = Math.max(ratio, tokens / text.length);
      return tokens <= maxTokens;
    },
    charsFor(maxChars) {
      if (counted < EXACT_FIRST || ratio === 0) return maxChars;
      return Math.min(maxChars, Math.floor(maxTokens / ratio));
    },
  };
}

/**
 * Tokens estimated from character classes, by cl100k_base's usual rates with room to spare: English
 * words about 4 letters a token, digits at most 3 a token, punctuation often a token each, non-ASCII
 * text (CJK, emoji) one or more a character.
 */
export function classEstimate(text: string): number {
  let letters = 0;
  let digits = 0;
  let spaces = 0;
  let other = 0;
  let wide = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) letters++;
    else if (c === 32 || c === 10 || c === 9 || c === 13) spaces++;
    else if (c >= 48 && c <= 57) digits++;
    else if (c < 128) other++;
    else wide++;
  }
  return letters * 0.25 + digits * 0.5 + spaces * 0.1 + other + wide * 1.5;
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
