import { STOPWORDS } from './stopwords.js';
import { stem } from './stem.js';

/** Dimensions of the built-in vectors. */
export const HASHED_DIMS = 256;
/** The model name stored beside every built-in vector; a change of the recipe below changes it. */
export const HASHED_MODEL = `hashed-ngrams-v1-${HASHED_DIMS}`;

const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
/** Shared by a word's character trigrams, so a long word does not outweigh a short one. */
const TRIGRAMS_WEIGHT = 1;
const MAX_WORD_CHARS = 32;

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The features of a text (stemmed words, pairs of neighbouring words, character trigrams) and how often each occurs. */
function features(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string, count: number): void => {
    out.set(key, (out.get(key) ?? 0) + count);
  };
  let previous: string | undefined;
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const word = match[0].slice(0, MAX_WORD_CHARS);
    if (STOPWORDS.has(word)) continue;
    const s = stem(word);
    add(`w:${s}`, WORD_WEIGHT);
    if (previous !== undefined) add(`b:${previous} ${s}`, BIGRAM_WEIGHT);
    previous = s;
    const padded = `<${s}>`;
    const n = padded.length - 2;
    for (let i = 0; i < n; i++) add(`t:${padded.slice(i, i + 3)}`, TRIGRAMS_WEIGHT / n);
  }
  return out;
}

/**
 * The built-in vector of a text (no model, no download): its features (stemmed words, word pairs,
 * character trigrams, so "retry" meets "retries" and "retrying"), each weighted by its count, damped
 * above 1 to 1 + ln(count), hashed into HASHED_DIMS
 * signed buckets (FNV-1a: bucket from the low bits, sign from the top bit), then L2-normalised.
 * A text with no feature gives the zero vector.
 */
export function hashedVector(text: string): Float32Array {
  const vec = new Float32Array(HASHED_DIMS);
  for (const [key, count] of features(text)) {
    const h = fnv1a(key);
    const value = count <= 1 ? count : 1 + Math.log(count);
    const i = h % HASHED_DIMS;
    vec[i] = (vec[i] as number) + (h & 0x80000000 ? -value : value);
  }
  return normalize(vec);
}

/** Scales a vector to unit length in place (the zero vector stays zero); returns it. */
export function normalize(vec: Float32Array): Float32Array {
  let sum = 0;
  for (const v of vec) sum += v * v;
  if (sum === 0) return vec;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vec.length; i++) vec[i] = (vec[i] as number) * inv;
  return vec;
}
