/** How files and entries are cut into chunks; a module of its own so that the service's main thread can name the options without loading the chunker (and its tokenizer). */
export type ChunkOptions = {
  /** Largest chunk, in characters (UTF-16 units), heading line included. @default 1500 */
  maxChars: number;
  /** Prose only: how much of a chunk's end is repeated at the start of the next one. @default 200 */
  overlapChars: number;
  /**
   * Largest chunk in tokens (cl100k_base), heading line included: a chunk packed to maxChars that
   * holds more (dense text: numbers, code, CJK) is cut in two until each part fits. @default 512
   */
  maxTokens?: number;
};

/** About 350 tokens of English prose a chunk (about 4 characters a token), at most 512 for denser text. */
export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { maxChars: 1500, overlapChars: 200, maxTokens: 512 };
