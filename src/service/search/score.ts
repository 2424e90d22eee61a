/**
 * BM25 → [0, 1]. SQLite's bm25() returns the negated Okapi BM25 sum (more negative = better) and
 * FTS5 floors each term's IDF at 1e-6, so `raw = -bm25` is ≥ 0. The score is
 * `raw / (raw + BM25_HALF_SCORE)`: strictly increasing in raw, 0 at raw = 0, 0.5 at raw = 5, < 1.
 * BM25 has no absolute scale; the constant was set on a corpus of 2,148 chunks (200 README files):
 * there the best hits of a one-term query have raw 5.5–9.7 (score 0.52–0.66) and of a three-term
 * query raw 11–15 (0.69–0.75). Scores grow slowly with the corpus (IDF is log N / n). In a dataset
 * of only a few chunks, where every query term occurs in half of them or more, IDF is floored and
 * scores are close to 0: a `score_threshold` is only meaningful on a dataset of some size.
 */
export const BM25_HALF_SCORE = 5;

/** The [0, 1] score of an FTS5 bm25() value. */
export function scoreFromBm25(bm25: number): number {
  const raw = Math.max(0, -bm25);
  return raw / (raw + BM25_HALF_SCORE);
}
