import type { SourceRef } from '../source-index.js';
import type { KnowledgeCheck } from './questions.js';

/** One result of a check's query, named: its rank (1 = best), what copy it is and the paths it stands for. */
export type CheckHit = {
  rank: number;
  id: string;
  score: number;
  chunkIndex: number;
  copy: SourceRef['copy'];
  names: string[];
};

/** What a check found for one expected path (or `id:N`). */
export type ExpectOutcome = {
  expect: string;
  /** The best rank of a current copy of it in the results; null: not found in the top k. */
  rank: number | null;
  /** Ranks where only an outdated copy of it came back (deleted locally, or a stale older version). */
  outdatedRanks: number[];
  /** Why it was not found, for people; null when found. */
  note: string | null;
};

/** One check's verdict: it passes when every expected path has a rank. */
export type CheckOutcome = {
  question: string;
  topK: number;
  line: number;
  passed: boolean;
  expected: ExpectOutcome[];
  results: CheckHit[];
};

/** A query result as the client gives it. */
export type ResultLike = { knowledgeSourceId: string; score: number; chunkIndex: number };

const ID_PREFIX = 'id:';

/**
 * Judges one check against its results (best first). An expected path matches a result whose copy is
 * current and names it (as `kbsync plan` prints it, or `source/path`); an intelligence entry is named
 * as `kbsync explain` takes it (`source/file#key`, `file#key`, or its entry file for any of its
 * entries); `id:N` matches result id N. A
 * copy of a deleted file, or a stale older copy, does not count: it is reported in `outdatedRanks`.
 */
export function evaluateCheck(
  check: KnowledgeCheck,
  topK: number,
  results: readonly ResultLike[],
  refOf: (id: string) => SourceRef,
  knownPaths: ReadonlySet<string>,
): CheckOutcome {
  const refs = results.map((r) => refOf(r.knowledgeSourceId));
  const hits: CheckHit[] = results.map((r, i) => {
    const ref = refs[i] as SourceRef;
    return { rank: i + 1, id: r.knowledgeSourceId, score: r.score, chunkIndex: r.chunkIndex, copy: ref.copy, names: ref.names };
  });
  const expected = check.expect.map((expect): ExpectOutcome => {
    const byId = expect.startsWith(ID_PREFIX) ? expect.slice(ID_PREFIX.length).trim() : null;
    const path = expect.replace(/^\.\//, '');
    const matching = hits.filter((h, i) => {
      if (byId !== null) return h.id === byId;
      const ref = refs[i] as SourceRef;
      if (h.names.includes(path) || ref.sourcePaths.includes(path)) return true;
      // An entry file (`kb/faq.md`, `faq.md`), as `kbsync explain` takes it: any of its entries.
      return ref.entry && ref.sourcePaths.some((p) => p.startsWith(`${path}#`));
    });
    const current = matching.find((h) => byId !== null || h.copy === 'current' || h.copy === 'untracked');
    const outdatedRanks = matching.filter((h) => h.copy === 'deleted' || h.copy === 'stale').map((h) => h.rank);
    if (current !== undefined) return { expect, rank: current.rank, outdatedRanks, note: null };
    const known = byId !== null || knownPaths.has(path);
    return { expect, rank: null, outdatedRanks, note: missNote(known, topK, outdatedRanks, matching) };
  });
  return {
    question: check.question,
    topK,
    line: check.line,
    passed: expected.every((e) => e.rank !== null),
    expected,
    results: hits,
  };
}

function missNote(known: boolean, topK: number, outdatedRanks: readonly number[], matching: readonly CheckHit[]): string {
  if (outdatedRanks.length > 0) {
    const copy = matching.find((h) => h.copy === 'deleted' || h.copy === 'stale')?.copy;
    const what = copy === 'deleted' ? 'a copy of a file deleted locally' : 'a stale older copy (the file changed since)';
    return `only ${what} came back, at rank ${outdatedRanks.join(', ')}`;
  }
  return known ? `not in the top ${topK}` : `not in the top ${topK}; no tracked file has this path (paths as \`kbsync plan\` prints them)`;
}
