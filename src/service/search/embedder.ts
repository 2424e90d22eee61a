import { hashedVector, HASHED_MODEL } from './hashed-vector.js';

/** Turns texts into unit vectors; `model` names the vectors it makes (stored beside each one). */
export type Embedder = {
  readonly model: string;
  /** Vectors of `texts`, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** Most texts per `embed` call. */
  readonly batchSize: number;
};

/** The built-in embedder: hashed word and character n-grams (search/hashed-vector.ts); no model, no network. */
export const hashedEmbedder: Embedder = {
  model: HASHED_MODEL,
  batchSize: 128,
  embed: async (texts) => texts.map((t) => hashedVector(t)),
};
