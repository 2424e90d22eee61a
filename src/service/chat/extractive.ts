import { queryTerms } from '../search/query-terms.js';
import { stem } from '../search/stem.js';
import { truncateAtWord } from '../ingest/split.js';
import type { ChunkHit } from '../store/chunks.js';

const MAX_SENTENCES = 3;
const MAX_SENTENCE_CHARS = 400;
const MIN_SENTENCE_WORDS = 3;

export const NOTHING_FOUND = 'I found nothing in this dataset that matches your question.';

function sentencesOf(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line) => line.split(/(?<=[.!?])\s+/u))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

type Candidate = { text: string; matched: number; rank: number; position: number; hit: ChunkHit; fragment: boolean };

/**
 * An answer built only from the retrieved chunks: the sentences (or record lines) that contain the
 * most distinct query terms, best first, each with the source it came from; says plainly when
 * nothing was retrieved. A source is cited by id and chunk, and by name when `sourceName` knows it.
 */
export function composeExtractiveAnswer(
  message: string,
  hits: readonly ChunkHit[],
  sourceName?: (knowledgeSourceId: number) => string | undefined,
): string {
  if (hits.length === 0) return NOTHING_FOUND;
  const terms = new Set(queryTerms(message).map(stem));
  const candidates: Candidate[] = [];
  hits.forEach((hit, rank) => {
    sentencesOf(hit.text).forEach((text, position) => {
      const tokens = text.match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
      const words = new Set(tokens.map(stem));
      const matched = [...terms].filter((t) => words.has(t)).length;
      candidates.push({ text, matched, rank, position, hit, fragment: tokens.length < MIN_SENTENCE_WORDS });
    });
  });
  // Headings and other fragments ("Returns") answer nothing; they count only when nothing else matched.
  const matching = candidates.filter((c) => c.matched > 0);
  const ordered = (matching.some((c) => !c.fragment) ? matching.filter((c) => !c.fragment) : matching).sort(
    (a, b) => b.matched - a.matched || a.rank - b.rank || a.position - b.position,
  );
  const picked: Candidate[] = [];
  for (const c of ordered.length > 0 ? ordered : candidates.slice(0, 1)) {
    if (picked.some((p) => p.text === c.text)) continue;
    picked.push(c);
    if (picked.length === MAX_SENTENCES) break;
  }
  const cite = (hit: ChunkHit): string => {
    const name = sourceName?.(hit.knowledgeSourceId);
    return `source ${hit.knowledgeSourceId}${name === undefined ? '' : ` ${JSON.stringify(name)}`}, chunk ${hit.chunkIndex}`;
  };
  const lines = picked.map((c) => `- ${truncateAtWord(c.text, MAX_SENTENCE_CHARS)} (${cite(c.hit)})`);
  return `From the dataset:\n${lines.join('\n')}`;
}
