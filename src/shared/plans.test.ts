import { describe, expect, it } from 'vitest';
import { costOf, isAdvancedPlan, maxFileBytesFor, MIB, SPEC_UPLOAD_COST, tierOf, uploadCost, type Operation, type Plan } from './plans.js';

describe('uploadCost: 5 + 1 per started MiB over 5 MiB', () => {
  it.each([
    ['0 B', 0, 5],
    ['1 B', 1, 5],
    ['5 MiB - 1', 5 * MIB - 1, 5],
    ['5 MiB', 5 * MIB, 5],
    ['5 MiB + 1', 5 * MIB + 1, 6],
    ['6 MiB', 6 * MIB, 6],
    ['6 MiB + 1', 6 * MIB + 1, 7],
    ['100 MiB', 100 * MIB, 100],
    ['500 MiB', 500 * MIB, 500],
  ])('%s costs %i credits', (_label, bytes, credits) => {
    expect(uploadCost(bytes)).toBe(credits);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('refuses a size of %d', (bytes) => {
    expect(() => uploadCost(bytes)).toThrow(RangeError);
  });

  it.each([
    [0, 5],
    [1, 6],
    [MIB, 6],
    [MIB + 1, 7],
    [5 * MIB, 10],
  ])("under the hosted docs' rule (includedMiB 0), %i bytes cost %i credits", (bytes, credits) => {
    expect(uploadCost(bytes, { base: 5, perMiB: 1, includedMiB: 0 })).toBe(credits);
  });

  it("is docs/api.md's rule by default", () => {
    expect(uploadCost(7 * MIB, SPEC_UPLOAD_COST)).toBe(uploadCost(7 * MIB));
    expect(uploadCost(7 * MIB, { base: 3, perMiB: 2, includedMiB: 1 })).toBe(3 + 2 * 6);
  });
});

describe('costOf', () => {
  it.each<[Operation, number]>([
    [{ kind: 'upload', bytes: 0 }, 5],
    [{ kind: 'upload', bytes: 5 * MIB + 1 }, 6],
    [{ kind: 'reprocess' }, 5],
    [{ kind: 'reindex' }, 2],
    [{ kind: 'query' }, 1],
    [{ kind: 'query_batch', queries: 7 }, 7],
    [{ kind: 'chat' }, 1],
    [{ kind: 'agent_create' }, 5],
    [{ kind: 'agent_config' }, 2],
    [{ kind: 'intelligence', duplicate: false }, 1],
    [{ kind: 'intelligence', duplicate: true }, 0],
    [{ kind: 'intelligence_batch', newEntries: 3 }, 3],
    [{ kind: 'intelligence_batch', newEntries: 0 }, 0],
  ])('%j costs %i', (op, credits) => {
    expect(costOf(op)).toBe(credits);
  });
});

describe('plans', () => {
  it.each<[Plan, 'basic' | 'advanced', number]>([
    ['free', 'basic', 100 * MIB],
    ['basic', 'basic', 100 * MIB],
    ['pro', 'advanced', 500 * MIB],
    ['team', 'advanced', 500 * MIB],
    ['enterprise', 'advanced', 500 * MIB],
  ])('%s is %s tier with a %i-byte file limit', (plan, tier, maxBytes) => {
    expect(tierOf(plan)).toBe(tier);
    expect(isAdvancedPlan(plan)).toBe(tier === 'advanced');
    expect(maxFileBytesFor(plan)).toBe(maxBytes);
  });
});
