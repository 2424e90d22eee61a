import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { keepYoungGenerationSmall, releaseMemory, whileYoungGenerationGrows } from './release-memory.js';

const newSpaceBytes = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/** Many objects that live through a few scavenges, as a sync's walk and plan do: V8 grows the young generation for them. */
function growYoungGeneration(): number {
  let kept: { i: number; s: string }[] = [];
  let total = 0;
  for (let round = 0; round < 12; round++) {
    kept = [];
    for (let i = 0; i < 200_000; i++) kept.push({ i, s: `path/${round}/${i}` });
    total += kept.length;
  }
  return total + kept.length;
}

/**
 * The most a pinned young generation may hold after growYoungGeneration(), against what the same work
 * reaches unpinned (`grown`): a quarter of it, 8 MB at least. Pinned, it stays small, but V8 was seen
 * growing it anyway now and then, where the flag read at run time loses a race with a scavenge; a pin
 * that does nothing reaches `grown`.
 */
const pinnedBound = (grown: number): number => Math.max(8 << 20, grown / 4);

/** The young generation's size after growYoungGeneration() with V8's default growth (the first test's). */
let grownByDefault = 0;

describe('releaseMemory', () => {
  it('collects and shrinks the young generation a large piece of work grew', () => {
    expect(growYoungGeneration()).toBeGreaterThan(0);
    const grown = newSpaceBytes();
    grownByDefault = grown;
    expect(grown).toBeGreaterThan(16 << 20);
    expect(releaseMemory(0)).toBe(true);
    expect(newSpaceBytes()).toBeLessThan(grown / 4);
  });

  it('does nothing while the heap is below the threshold', () => {
    expect(releaseMemory(Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe('keepYoungGenerationSmall', () => {
  it('stops the young generation growing under the same work (run last: the flag holds for the rest of the process)', () => {
    expect(releaseMemory(0)).toBe(true);
    keepYoungGenerationSmall();
    expect(growYoungGeneration()).toBeGreaterThan(0);
    // The same work grew it past 16 MB by default (the first test); pinned, it stays small.
    expect(grownByDefault).toBeGreaterThan(16 << 20);
    expect(newSpaceBytes()).toBeLessThanOrEqual(pinnedBound(grownByDefault));
  });
});

describe('whileYoungGenerationGrows', () => {
  it('lets the pinned young generation grow for the work it runs, and pins it again after (run after keepYoungGenerationSmall)', async () => {
    expect(releaseMemory(0)).toBe(true);
    let inside = 0;
    const value = await whileYoungGenerationGrows(async () => {
      growYoungGeneration();
      inside = newSpaceBytes();
      return 'done';
    });
    expect(value).toBe('done');
    expect(inside).toBeGreaterThan(16 << 20);
    // Given back, then the same work outside: pinned again.
    expect(releaseMemory(0)).toBe(true);
    expect(growYoungGeneration()).toBeGreaterThan(0);
    expect(newSpaceBytes()).toBeLessThanOrEqual(pinnedBound(inside));
  });

  it('pins it again when the work throws', async () => {
    await expect(whileYoungGenerationGrows(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(releaseMemory(0)).toBe(true);
    expect(growYoungGeneration()).toBeGreaterThan(0);
    expect(newSpaceBytes()).toBeLessThanOrEqual(pinnedBound(grownByDefault));
  });
});
