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

type Feature = { count: number; scale: number };

/** The features of a text (stemmed words, pairs of neighbouring words, character trigrams): how often each occurs, and its word's scale. */
function features(text: string, weightOf?: (word: string) => number): Map<string, Feature> {
  const out = new Map<string, Feature>();
  const add = (key: string, count: number, scale: number): void => {
    const f = out.get(key);
    if (f === undefined) out.set(key, { count, scale });
    else {
      f.count += count;
      f.scale = Math.max(f.scale, scale);
    }
  };
  let previous: { stem: string; scale: number } | undefined;
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const word = match[0].slice(0, MAX_WORD_CHARS);
    if (STOPWORDS.has(word)) continue;
    const s = stem(word);
    const scale = weightOf?.(word) ?? 1;
    add(`w:${s}`, WORD_WEIGHT, scale);
    if (previous !== undefined) add(`b:${previous.stem} ${s}`, BIGRAM_WEIGHT, Math.min(scale, previous.scale));
    previous = { stem: s, scale };
    const padded = `<${s}>`;
    const n = padded.length - 2;
    for (let i = 0; i < n; i++) add(`t:${padded.slice(i, i + 3)}`, TRIGRAMS_WEIGHT / n, scale);
  }
  return out;
}

/**
 * The built-in vector of a text (no model, no download): its features (stemmed words, word pairs,
 * character trigrams, so "retry" meets "retries" and "retrying"), each weighted by its count, damped
 * above 1 to 1 + ln(count), times its word's scale (`weightOf`, 1 by default: a query's words are
 * scaled by their inverse document frequency, see search/term-weights.ts), hashed into HASHED_DIMS
 * signed buckets (FNV-1a: bucket from the low bits, sign from the top bit), then L2-normalised.
 * A text with no feature gives the zero vector.
 */
export function hashedVector(text: string, weightOf?: (word: string) => number): Float32Array {
  const vec = new Float32Array(HASHED_DIMS);
  for (const [key, f] of features(text, weightOf)) {
    const h = fnv1a(key);
    const value = (f.count <= 1 ? f.count : 1 + Math.log(f.count)) * f.scale;
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
