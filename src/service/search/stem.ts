/**
 * A light English stemmer: folds diacritics and case, then strips one common inflection, so
 * "prices" and "price", "shipping" and "shipped", "retries" and "retry" meet. Words of four letters
 * or fewer are kept whole. Cruder than FTS5's porter stemmer on purpose: it only has to make the
 * same word's forms collide, in the hashed vectors and in the extractive answer.
 */
export function stem(word: string): string {
  // ASCII has no diacritics to fold: skipping NFD there halves the cost of hashing a chunk.
  const w = /^[\x20-\x7e]*$/.test(word) ? word.toLowerCase() : word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
  if (w.length <= 4) return w;
  for (const suffix of ['ingly', 'edly', 'ies', 'ing', 'ed', 'es', 'ly', 's']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) return suffix === 'ies' ? `${w.slice(0, -3)}y` : w.slice(0, -suffix.length);
  }
  return w;
}
