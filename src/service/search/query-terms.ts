import { STOPWORDS } from './stopwords.js';

/** At most this many distinct terms of a query are searched (the rest are ignored). */
export const MAX_QUERY_TERMS = 32;
const MAX_TERM_CHARS = 64;

/**
 * The searchable terms of free text: runs of letters, digits and combining marks (the same
 * characters SQLite's unicode61 tokenizer keeps), NFKC-normalised and lowercased, stopwords
 * dropped, duplicates removed, in order of first appearance.
 */
export function queryTerms(text: string, maxTerms = MAX_QUERY_TERMS): string[] {
  const seen = new Set<string>();
  for (const match of text
    .normalize('NFKC')
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const term = match[0].slice(0, MAX_TERM_CHARS);
    if (STOPWORDS.has(term) || seen.has(term)) continue;
    seen.add(term);
    if (seen.size >= maxTerms) break;
  }
  return [...seen];
}

/**
 * A safe FTS5 MATCH expression for user text, or null when it has no searchable term.
 * Every term is a double-quoted string (it can hold no quote: terms are letters and digits only),
 * so FTS5 operators typed by a user (`NEAR`, `AND`, `*`, `-`, `:`, `^`, parentheses) are plain words
 * or dropped, never syntax. Terms are OR-ed: BM25 ranks chunks that match more of them higher.
 */
export function toFtsQuery(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length === 0 ? null : terms.map((t) => `"${t}"`).join(' OR ');
}
