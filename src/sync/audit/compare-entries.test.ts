import { describe, expect, it } from 'vitest';
import type { TrackedEntry } from '../state/index.js';
import { auditEntries } from './compare-entries.js';

const SHA = (c: string): string => c.repeat(64);

function entry(sha256: string, remoteId: string, source: string | null, path: string | null, error: string | null = null): TrackedEntry {
  return { sha256, agentId: '1', remoteId, status: 'processed', error, source, path, title: null, updatedAt: '2026-11-26T10:00:00Z' };
}

const listed = (id: string, sha256: string, status = 'processed') => ({ id, sha256, status, title: null });

describe('auditEntries', () => {
  it('content moved to another record, and an entry adopted from the listing (no record known), are not left behind', () => {
    const tracked = new Map([
      [SHA('a'), entry(SHA('a'), '1', 'kb', 'old.jsonl#1')],
      [SHA('b'), entry(SHA('b'), '2', null, null)],
    ]);

    const r = auditEntries({
      local: [{ source: 'kb', path: 'new.jsonl#1', sha256: SHA('a') }],
      tracked,
      listing: [listed('1', SHA('a')), listed('2', SHA('b'))],
    });

    expect(r.items).toEqual([]);
    expect(r).toMatchObject({ local: 1, tracked: 2, remote: 2 });
  });

  it('content in two records not written yet is one finding (one write), at its first record', () => {
    const r = auditEntries({
      local: [
        { source: 'kb', path: 'a.jsonl#1', sha256: SHA('c') },
        { source: 'kb', path: 'b.csv#1', sha256: SHA('c') },
      ],
      tracked: new Map(),
      listing: [],
    });

    expect(r.items.map((i) => [i.kind, i.path])).toEqual([['entry-not-written', 'kb/a.jsonl#1']]);
  });

  it("a left-behind entry that failed says so in its own detail (with the webhook's reason), not as a failed finding", () => {
    const tracked = new Map([[SHA('d'), entry(SHA('d'), '7', 'kb', 'faq.yaml#1', 'the entry has no text to index')]]);

    const r = auditEntries({ local: [], tracked, listing: [listed('7', SHA('d'), 'failed')] });

    expect(r.items.map((i) => i.kind)).toEqual(['entry-removed']);
    expect(r.items[0]?.detail).toMatch(
      /stays in the dataset \(the API has no delete\) \(processing failed: the entry has no text to index\)$/,
    );
  });
});
