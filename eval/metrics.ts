/** One question's ranked answer: the file of each retrieved chunk, best first, and the files that answer it. */
export type Ranked = { files: readonly string[]; relevant: readonly string[]; paraphrased: boolean };

/**
 * recall@k: the share of questions with a chunk of an answering file among the first k; MRR: the
 * mean of 1 / rank (1-based) of the first such chunk, 0 when none was retrieved. 0 and 0 for no question.
 */
export function scoreRanking(runs: readonly Ranked[], k: number): { recall: number; mrr: number } {
  if (runs.length === 0) return { recall: 0, mrr: 0 };
  let hits = 0;
  let rr = 0;
  for (const r of runs) {
    const rank = r.files.findIndex((f) => r.relevant.includes(f));
    if (rank >= 0 && rank < k) hits++;
    if (rank >= 0) rr += 1 / (rank + 1);
  }
  return { recall: hits / runs.length, mrr: rr / runs.length };
}
