import { describe, expect, it } from 'vitest';
import { TrackedIndex } from '../tracked/tracked-index.js';
import type { ObservedFile, TrackedFile } from '../types.js';
import { auditDataset, type AuditInput, type AuditRemote } from './compare.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);
const NOW = new Date('2026-11-26T10:00:00Z');

function observed(source: string, path: string, sha256: string | null, size = 10): ObservedFile {
  return { source, path, absPath: `/x/${source}/${path}`, size, mtimeNs: '1', inode: 1, sha256 };
}

function tracked(source: string, path: string, sha256: string, remoteId: string | null, remoteName = path): TrackedFile {
  return {
    source,
    path,
    size: 10,
    mtimeNs: '1',
    inode: 1,
    sha256,
    remoteName,
    remoteId,
    remoteStatus: 'processed',
    reprocessAttempts: 0,
    lastAction: 'upload',
    lastReason: null,
    updatedAt: NOW.toISOString(),
  };
}

function remote(id: string, name: string, sha256: string, status = 'processed', updatedAt: string | null = null): AuditRemote {
  return { id, name, sha256, status, error: null, updatedAt };
}

/** The audit of files, rows and a listing given as arrays (the listing as one page). */
function audit(input: Omit<AuditInput, 'tracked' | 'listing'> & { tracked: TrackedFile[]; listing: AuditRemote[] }) {
  return auditDataset({ ...input, tracked: TrackedIndex.of(input.tracked), listing: [input.listing] });
}

describe('auditDataset', () => {
  it('a copy still queued or processing is reported with how long ago it last changed', async () => {
    const report = await audit({
      observed: [observed('docs', 'a.md', SHA_A)],
      tracked: [tracked('docs', 'a.md', SHA_A, '1')],
      listing: [remote('1', 'a.md', SHA_A, 'processing', '2026-11-26T09:15:00Z')],
      sourceNames: ['docs'],
      maxFileBytes: 1000,
      now: NOW,
    });

    expect(report.items).toEqual([
      {
        kind: 'processing',
        path: 'a.md',
        remoteId: '1',
        remoteName: 'a.md',
        remoteStatus: 'processing',
        detail: 'still processing, last changed 45 min ago',
        error: null,
      },
    ]);
  });

  it('with several sources, paths are source/path; a file over the size limit is not counted as not uploaded; paths sharing one copy (same content) are in step', async () => {
    const report = await audit({
      observed: [
        observed('guides', 'a.md', SHA_A),
        observed('guides', 'copy-of-a.md', SHA_A),
        observed('guides', 'huge.csv', SHA_B, 5000),
        observed('notes', 'new.md', SHA_B),
      ],
      tracked: [tracked('guides', 'a.md', SHA_A, '1', 'guides/a.md'), tracked('guides', 'copy-of-a.md', SHA_A, '1', 'guides/a.md')],
      listing: [remote('1', 'guides/a.md', SHA_A), remote('2', 'elsewhere/z.md', SHA_B)],
      sourceNames: ['guides', 'notes'],
      maxFileBytes: 1000,
      now: NOW,
    });

    expect(report.items.map((i) => [i.kind, i.path, i.remoteName, i.detail])).toEqual([
      [
        'remote-untracked',
        null,
        'elsewhere/z.md',
        'the state does not know this file (uploaded by hand, by another tool or an older state)',
      ],
      [
        'not-uploaded',
        'notes/new.md',
        null,
        'not tracked; its content is in the dataset as elsewhere/z.md (id 2): a sync records it without an upload',
      ],
    ]);
    expect(report.summary).toMatchObject({ local: 4, tracked: 2, remote: 2, drift: 2 });
  });

  it('an empty file is not counted as not uploaded: a sync skips it (skip:empty), never uploads it', async () => {
    const report = await audit({
      observed: [observed('docs', 'a.md', SHA_A), observed('docs', 'empty.md', SHA_B, 0)],
      tracked: [tracked('docs', 'a.md', SHA_A, '1')],
      listing: [remote('1', 'a.md', SHA_A)],
      sourceNames: ['docs'],
      maxFileBytes: 1000,
      now: NOW,
    });

    expect(report.items).toEqual([]);
    expect(report.summary).toMatchObject({ local: 2, tracked: 1, remote: 1, drift: 0 });
  });

  it('a tracked file the config now leaves out (exclude) is not said to be deleted locally', async () => {
    const report = await audit({
      observed: [],
      skipped: [{ source: 'docs', path: 'old.md', reason: 'ignored', detail: 'matches exclude: old.md', size: null }],
      tracked: [tracked('docs', 'old.md', SHA_A, '1')],
      listing: [remote('1', 'old.md', SHA_A)],
      sourceNames: ['docs'],
      maxFileBytes: 1000,
      now: NOW,
    });

    expect(report.items.map((i) => [i.kind, i.path, i.detail])).toEqual([
      [
        'deleted-remains',
        'old.md',
        'left out of the sync (ignored: matches exclude: old.md); its remote copy (id 1) remains (the API has no delete)',
      ],
    ]);
  });

  it('a second, untracked copy of the current content is reported as untracked, with its path', async () => {
    const report = await audit({
      observed: [observed('docs', 'a.md', SHA_A)],
      tracked: [tracked('docs', 'a.md', SHA_A, '2')],
      listing: [remote('1', 'a.md', SHA_A), remote('2', 'a.md', SHA_A)],
      sourceNames: ['docs'],
      maxFileBytes: 1000,
      now: NOW,
    });

    expect(report.items.map((i) => [i.kind, i.path, i.remoteId, i.detail])).toEqual([
      ['remote-untracked', 'a.md', '1', 'the state does not track this copy of a.md (same content)'],
    ]);
  });

  it('an outdated copy that failed says so in its own detail: no separate failed finding', async () => {
    const failedOld = { ...remote('1', 'report.docx', SHA_A, 'failed'), error: 'parse_failed: truncated' };
    const report = await audit({
      observed: [observed('docs', 'report.docx', SHA_B)],
      tracked: [tracked('docs', 'report.docx', SHA_B, '2'), tracked('docs', 'gone.md', SHA_A, '3')],
      listing: [failedOld, remote('2', 'report.docx', SHA_B), { ...remote('3', 'gone.md', SHA_A, 'failed'), error: 'parse_failed: bad' }],
      sourceNames: ['docs'],
      maxFileBytes: 1000,
      now: NOW,
    });

    expect(report.items.map((i) => [i.kind, i.path, i.error, i.detail])).toEqual([
      [
        'stale-copy',
        'report.docx',
        'parse_failed: truncated',
        'an older copy of report.docx, uploaded again since; it stays (the API has no delete or replace) (processing failed: parse_failed: truncated)',
      ],
      [
        'deleted-remains',
        'gone.md',
        'parse_failed: bad',
        'deleted locally; its remote copy (id 3) remains (the API has no delete) (processing failed: parse_failed: bad)',
      ],
    ]);
  });

  it("a file the walk counted (unchanged since its row, not listed) is there with the row's content: the findings are those of a walk that listed it", async () => {
    const rows = [tracked('docs', 'a.md', SHA_A, '1'), tracked('docs', 'b.md', SHA_B, '2'), tracked('docs', 'c.md', SHA_A, '3')];
    const listing = [
      remote('1', 'a.md', SHA_A),
      { ...remote('2', 'b.md', SHA_B, 'failed'), error: 'parse_failed: x' },
      remote('4', 'a.md', SHA_B),
    ];
    const common = { sourceNames: ['docs'], maxFileBytes: 1000, now: NOW };
    const listed = await audit({
      ...common,
      observed: [observed('docs', 'a.md', SHA_A), observed('docs', 'b.md', SHA_B), observed('docs', 'c.md', SHA_A)],
      tracked: rows,
      listing,
    });
    const counted = await auditDataset({
      ...common,
      observed: [],
      counted: Uint8Array.of(1, 1, 1),
      tracked: TrackedIndex.of(rows),
      listing: [listing],
    });

    expect(listed.items.map((i) => [i.kind, i.path, i.remoteId])).toEqual([
      ['missing-remote', 'c.md', '3'],
      ['stale-copy', 'a.md', '4'],
      ['failed', 'b.md', '2'],
    ]);
    expect(counted.items).toEqual(listed.items);
    expect(counted.summary).toEqual(listed.summary);
    expect(counted.summary.local).toBe(3);
  });

  it('reads the listing a page at a time: a copy on two pages (the listing shifted) counts once', async () => {
    async function* pages() {
      yield [remote('1', 'a.md', SHA_A), { ...remote('2', 'b.md', SHA_B, 'failed'), error: 'parse_failed: x' }];
      yield [{ ...remote('2', 'b.md', SHA_B, 'failed'), error: 'parse_failed: x' }, remote('3', 'hand.md', SHA_B)];
    }
    const report = await auditDataset({
      observed: [observed('docs', 'a.md', SHA_A), observed('docs', 'b.md', SHA_B)],
      tracked: TrackedIndex.of([tracked('docs', 'a.md', SHA_A, '1'), tracked('docs', 'b.md', SHA_B, '2')]),
      listing: pages(),
      sourceNames: ['docs'],
      maxFileBytes: 1000,
      now: NOW,
    });

    expect(report.items.map((i) => [i.kind, i.remoteId])).toEqual([
      ['remote-untracked', '3'],
      ['failed', '2'],
    ]);
    expect(report.summary).toMatchObject({ local: 2, tracked: 2, remote: 3, drift: 2 });
  });
});
