import { describe, expect, it } from 'vitest';
import { scoreFromBm25 } from './score.js';

describe('scoreFromBm25', () => {
  it('maps better (more negative) bm25 to a higher score, within [0, 1]', () => {
    const bm25 = [0, -1e-6, -0.5, -1, -5, -10, -100, -1e9];

    const scores = bm25.map(scoreFromBm25);

    expect(scores[0]).toBe(0);
    expect(scores[4]).toBe(0.5);
    for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeGreaterThan(scores[i - 1] as number);
    for (const s of scores) expect(s >= 0 && s < 1).toBe(true);
  });

  it('never goes below 0 for a positive bm25', () => {
    expect(scoreFromBm25(3)).toBe(0);
  });
});
