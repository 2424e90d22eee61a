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

/** Adds `value` to the bucket of hash `h`, signed by its top bit. */
function addHashed(vec: Float32Array, h: number, value: number): void {
  const i = h % HASHED_DIMS;
  vec[i] = (vec[i] as number) + (h & 0x80000000 ? -value : value);
}

/** FNV-1a of the three UTF-16 code units of `s` at `at` ("t:" prefix folded into the seed), without a substring. */
function trigramHash(s: string, at: number): number {
  let h = TRIGRAM_SEED;
  for (let i = at; i < at + 3; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
const TRIGRAM_SEED = fnv1a('t:');

/**
 * The built-in vector of a text (no model, no download): its stemmed words and pairs of
 * neighbouring words, each weighted by its count damped above 1 to 1 + ln(count), and its words'
 * character trigrams (one unit shared by each word's trigrams, so "retry" meets "retries" and
 * "retrying", and a long word does not outweigh a short one), hashed into HASHED_DIMS signed
 * buckets (FNV-1a: bucket from the low bits, sign from the top bit), then L2-normalised. A text
 * with no feature gives the zero vector. `weightOf` (a query's vector: search/term-weights.ts) scales
 * each word's features by a weight of the word as typed (lowercased); a pair of words takes the
 * geometric mean of theirs. Without it every weight is 1 (the stored vectors of chunks). With `into`
 * (HASHED_DIMS long) the vector is written there, overwriting it, and returned: ingest reuses one
 * array for every chunk instead of leaving one behind for the collector each time.
 */
export function hashedVector(text: string, weightOf?: (word: string) => number, into?: Float32Array): Float32Array {
  if (into !== undefined && into.length !== HASHED_DIMS) throw new RangeError(`hashedVector: into must hold ${HASHED_DIMS} numbers`);
  const vec = into?.fill(0) ?? new Float32Array(HASHED_DIMS);
  const counts = new Map<string, number>();
  const weights = new Map<string, number>();
  let previous: { s: string; w: number } | undefined;
  for (const match of text
    .normalize('NFKC')
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const word = match[0].slice(0, MAX_WORD_CHARS);
    if (STOPWORDS.has(word)) continue;
    const s = stem(word);
    const w = weightOf === undefined ? 1 : weightOf(word);
    counts.set(`w:${s}`, (counts.get(`w:${s}`) ?? 0) + WORD_WEIGHT);
    weights.set(`w:${s}`, w);
    if (previous !== undefined) {
      const key = `b:${previous.s} ${s}`;
      counts.set(key, (counts.get(key) ?? 0) + BIGRAM_WEIGHT);
      weights.set(key, Math.sqrt(previous.w * w));
    }
    previous = { s, w };
    const padded = `<${s}>`;
    const n = padded.length - 2;
    for (let i = 0; i < n; i++) addHashed(vec, trigramHash(padded, i), (w * TRIGRAMS_WEIGHT) / n);
  }
  for (const [key, count] of counts) addHashed(vec, fnv1a(key), (count <= 1 ? count : 1 + Math.log(count)) * (weights.get(key) ?? 1));
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
