import { describe, expect, it } from 'vitest';
import { HASHED_DIMS, hashedVector } from './hashed-vector.js';

describe('hashedVector', () => {
  it('is a unit vector of HASHED_DIMS, zero for a text with no word, and leans to the heavier words when weighted', () => {
    const v = hashedVector('harbour lantern copper');
    expect(v).toHaveLength(HASHED_DIMS);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect([...hashedVector('  ... !!')].every((x) => x === 0)).toBe(true);

    const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * (b[i] as number), 0);
    const harbour = hashedVector('harbour');
    const lantern = hashedVector('lantern');
    const q = hashedVector('harbour lantern', (w) => (w === 'harbour' ? 5 : 1));
    expect(dot(q, harbour)).toBeGreaterThan(2 * dot(q, lantern));
  });

  it('writes into a given array, overwriting what it held, the same vector as a new one', () => {
    const into = new Float32Array(HASHED_DIMS).fill(9);

    const v = hashedVector('harbour lantern copper', undefined, into);

    expect(v).toBe(into);
    expect([...v]).toEqual([...hashedVector('harbour lantern copper')]);
    expect([...hashedVector('  ... !!', undefined, into)].every((x) => x === 0)).toBe(true);
    expect(() => hashedVector('harbour', undefined, new Float32Array(3))).toThrow(RangeError);
  });
});
