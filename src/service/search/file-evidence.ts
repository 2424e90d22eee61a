/**
 * File-level evidence in a chunk ranking. A question is usually answered by a file, and a file
 * whose other chunks also match the query is more likely to be the one than a file with a single
 * stray match; and a list of the same file's chunks one after another hides the other files a
 * reader (or a chat model) could use. On both evaluation sets (docs/service.md: Evaluation):
 * together the two raise recall@5 and MRR on each; the lift alone cost recall@5 on both (one file's
 * chunks fill the first five), the damping alone gained little.
 */

/** Share of the file's next best chunks (the best other one, plus half the second) that lifts a chunk. */
export const SIBLING_SHARE = 0.5;
/** A chunk's score is multiplied by this once for each chunk of its file already ranked above it. */
export const REPEAT_FACTOR = 0.8;

/**
 * A file of more chunks than this is large: matches of common words in many of its chunks are
 * likely by chance, not a sign that the file is about the query. Its siblings' lift is scaled by
 * LARGE_FILE_CHUNKS / n and its chunks' own scores divided by `1 + LARGE_FILE_PENALTY · log2(n / LARGE_FILE_CHUNKS)`
 * (n its chunks), so two files of thousands of records do not outrank a small file's only match.
 * No file of the evaluation sets is this large: both sets rank as before (docs/service.md: Evaluation).
 */
export const LARGE_FILE_CHUNKS = 200;
const LARGE_FILE_PENALTY = 0.05;

/** A ranked candidate: its id, its file (source) and its score in [0, 1]. */
export type FileScored = { id: number; sourceId: number; score: number };

/**
 * Re-scores `candidates` (scores in [0, 1]) with their file's evidence, best first, ties by id:
 * 1. each chunk is lifted towards 1 by its file's other candidates:
 *    `s + (1 − s) · min(1, SIBLING_SHARE · (o₁ + o₂ / 2))`, o₁ ≥ o₂ the best other chunks' scores
 *    (0 when missing), so the score stays in [0, 1] and a lone chunk keeps its own; in a large
 *    file (`fileChunks`, see LARGE_FILE_CHUNKS) the lift is smaller and `s` lowered first;
 * 2. greedily, the next chunk is the one with the best score times REPEAT_FACTOR to the power of
 *    the number of its file's chunks already placed, and keeps that score: a file's second chunk
 *    still comes before another file's much weaker one, and the returned scores decrease.
 * Returns at most `limit` chunks. Cost: O(n · limit) for n candidates (the fused lists' few dozen).
 */
export function rankWithFileEvidence<T extends FileScored>(
  candidates: readonly T[],
  limit: number,
  fileChunks: (sourceId: number) => number = () => 1,
): T[] {
  const byFile = new Map<number, number[]>();
  for (const c of candidates) {
    const list = byFile.get(c.sourceId);
    if (list === undefined) byFile.set(c.sourceId, [c.score]);
    else list.push(c.score);
  }
  for (const list of byFile.values()) list.sort((a, b) => b - a);
  const lifted = candidates.map((c) => {
    const list = byFile.get(c.sourceId) as number[];
    // The two best scores of the file other than this chunk's own (one copy of it is skipped).
    const own = list.indexOf(c.score);
    const others = own < 2 ? list.filter((_, i) => i !== own).slice(0, 2) : list.slice(0, 2);
    const size = fileChunks(c.sourceId) / LARGE_FILE_CHUNKS;
    const bonus = Math.min(1, SIBLING_SHARE * ((others[0] ?? 0) + (others[1] ?? 0) / 2)) * Math.min(1, 1 / size);
    const base = size > 1 ? c.score / (1 + LARGE_FILE_PENALTY * Math.log2(size)) : c.score;
    return { ...c, score: base + (1 - base) * bonus };
  });
  lifted.sort((a, b) => b.score - a.score || a.id - b.id);

  const placed = new Map<number, number>();
  const out: T[] = [];
  const rest = lifted;
  while (rest.length > 0 && out.length < limit) {
    let best = 0;
    let bestScore = -1;
    for (let i = 0; i < rest.length; i++) {
      const c = rest[i] as T;
      const s = c.score * REPEAT_FACTOR ** (placed.get(c.sourceId) ?? 0);
      if (s > bestScore) {
        bestScore = s;
        best = i;
      }
    }
    const [c] = rest.splice(best, 1) as [T];
    placed.set(c.sourceId, (placed.get(c.sourceId) ?? 0) + 1);
    out.push({ ...c, score: bestScore });
  }
  return out;
}
