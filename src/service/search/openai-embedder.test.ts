import { describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../shared/errors.js';
import { embeddingsUrl, parseEmbeddings } from './openai-embedder.js';

const failure = (text: string, count: number): string => {
  try {
    parseEmbeddings(text, count);
  } catch (err) {
    if (isKbsyncError(err, 'embeddings_failed')) return err.message;
    throw err;
  }
  throw new Error('no failure');
};

describe('openai embedder', () => {
  it.each([
    ['http://h:1', 'http://h:1/v1/embeddings'],
    ['http://h:1/v1/', 'http://h:1/v1/embeddings'],
    ['https://h/v1/embeddings', 'https://h/v1/embeddings'],
  ])('%s → %s', (input, expected) => {
    expect(embeddingsUrl(input)).toBe(expected);
  });

  it('puts vectors in input order by their index and normalises them', () => {
    const vectors = parseEmbeddings(
      JSON.stringify({
        data: [
          { index: 1, embedding: [0, 2] },
          { index: 0, embedding: [3, 4] },
        ],
      }),
      2,
    );

    expect(vectors.map((v) => [...v])).toEqual([
      [0.6000000238418579, 0.800000011920929],
      [0, 1],
    ]);
  });

  it('refuses answers it cannot use, saying what was wrong', () => {
    expect(failure('<html>', 1)).toContain('not JSON');
    expect(failure(JSON.stringify({ data: [] }), 2)).toBe('the embeddings provider answered 0 vectors for 2 texts');
    expect(failure(JSON.stringify({ data: [{ embedding: ['x'] }] }), 1)).toContain('vector 0 is not a list of numbers');
    expect(failure(JSON.stringify({ data: [{ embedding: [1] }, { embedding: [1, 2] }] }), 2)).toContain('different lengths');
  });
});
