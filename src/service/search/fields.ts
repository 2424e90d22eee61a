/**
 * BM25 weights of the full-text index's columns (store/chunks.ts): a chunk's text (which starts with
 * its heading path), the heading path again, and its source's title (a file's name or an entry's
 * title). A query word in a heading or a file name says more about what a chunk is about than one in
 * its body. On the project's evaluation (docs/benchmarks.md: Retrieval quality) heading and title at 2
 * raised BM25's MRR on both halves of the questions; 1.5 or 3 did no better.
 */
const WEIGHTS = { text: 1, heading: 2, title: 2 } as const;

/** The SQL of a chunk's weighted bm25() (more negative is better). */
export const FIELD_BM25 = `bm25(chunks_fts, ${WEIGHTS.text}, ${WEIGHTS.heading}, ${WEIGHTS.title})`;
