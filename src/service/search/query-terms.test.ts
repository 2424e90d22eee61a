import { describe, expect, it } from 'vitest';
import { MAX_QUERY_TERMS, queryTerms, toFtsQuery } from './query-terms.js';

describe('toFtsQuery', () => {
  it.each([
    ['refund policy', '"refund" OR "policy"'],
    ['What is the REFUND policy?', '"refund" OR "policy"'],
    ['"NEAR" AND -foo* OR (bar)', '"near" OR "foo" OR "bar"'],
    ['text:secret ^start col:"x"', '"text" OR "secret" OR "start" OR "col" OR "x"'],
    ["'; DROP TABLE chunks; --", '"drop" OR "table" OR "chunks"'],
    ['café Ｆｕｌｌ width', '"café" OR "full" OR "width"'],
    ['zip 08123 zip', '"zip" OR "08123"'],
    ['日本語 テキスト', '"日本語" OR "テキスト"'],
  ])('%j → %s', (input, expected) => {
    expect(toFtsQuery(input)).toBe(expected);
  });

  it.each(['', '   ', '"""', '*', '- : ^ ( ) " *', 'the and of to', 'What is it?'])('%j has no searchable term', (input) => {
    expect(toFtsQuery(input)).toBeNull();
  });

  it('keeps at most MAX_QUERY_TERMS distinct terms and clips very long ones', () => {
    const terms = queryTerms(`${Array.from({ length: 100 }, (_, i) => `t${i}`).join(' ')} ${'y'.repeat(500)}`);

    expect(terms).toHaveLength(MAX_QUERY_TERMS);
    expect(queryTerms('z'.repeat(500))[0]).toHaveLength(64);
  });
});
