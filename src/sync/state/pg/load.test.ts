import { describe, expect, it } from 'vitest';
import { trackedIndexOf, type PgIndexReads } from './load.js';
import { SEP, type PgDetails, type PgTrackedSource } from './tracked.js';

const sha = (c: string): string => c.repeat(64);

/** One source's run of joined columns as the worker reads it (tracked.ts RUN). */
function run(sourceId: number, source: string, paths: string[]): PgTrackedSource {
  return {
    sourceId,
    source,
    count: paths.length,
    paths: paths.join(SEP),
    sizes: paths.map(() => '3').join(','),
    mtimeNs: paths.map(() => '1718000000123456789').join(','),
    inodes: paths.map((_, i) => String(i + 1)).join(','),
    sha256: paths.map((_, i) => sha('abcdef'[i % 6] as string)).join(''),
    remoteNames: paths.map(() => '').join(SEP),
    remoteIds: paths.map((_, i) => `id${i}`).join(SEP),
    nullIds: paths.map(() => '0').join(''),
    remoteStatuses: paths.map(() => 'processed').join(','),
    deletedFlags: paths.map(() => '0').join(''),
    remoteErrors: [],
  };
}

/** Details by path, as trackedDetailsOf reads them later: attempts, last action and reason, time, chunks. */
function details(paths: string[]): PgDetails {
  return {
    paths,
    columns: [paths.map(() => 2), paths.map(() => 'upload'), paths.map(() => 'new file'), paths.map(() => 1_000), paths.map(() => 4)],
  };
}

describe('the PostgreSQL tracked index', () => {
  it("reads every source's runs into one index, its columns whole across runs", () => {
    const reads: PgIndexReads = {
      trackedSources: (onRun) => [run(1, 'docs', ['a.md', 'b.md']), run(1, 'docs', ['c.md']), run(2, 'wiki', ['x.md'])].forEach(onRun),
      trackedRowsOf: () => [],
      trackedDetailsOf: (id) => details(id === 1 ? ['a.md', 'b.md', 'c.md'] : ['x.md']),
    };
    const index = trackedIndexOf(reads);
    expect([...index.keys()]).toEqual(['docs\0a.md', 'docs\0b.md', 'docs\0c.md', 'wiki\0x.md']);
    const c = index.find('docs', 'c.md');
    expect([c?.sha256, c?.mtimeNs, c?.inode, c?.remoteId, c?.lastAction, c?.reprocessAttempts]).toEqual([
      sha('a'),
      '1718000000123456789',
      1,
      'id0',
      'upload',
      2,
    ]);
  });

  it('makes the rows another runner removed after the columns were read as they were read, with no details: never an error', () => {
    // The shared state's other runner renamed its b.md between this runner's two reads.
    const reads: PgIndexReads = {
      trackedSources: (onRun) => onRun(run(7, 'r5', ['a.md', 'b.md', 'c.md'])),
      trackedRowsOf: () => [],
      trackedDetailsOf: () => details(['a.md', 'c.md', 'moved.md']),
    };
    const index = trackedIndexOf(reads);
    const [a, b, c] = ['a.md', 'b.md', 'c.md'].map((p) => index.find('r5', p));
    expect([a?.lastAction, c?.lastAction]).toEqual(['upload', 'upload']);
    expect([b?.sha256, b?.remoteId, b?.reprocessAttempts, b?.lastAction, b?.lastReason, b?.updatedAt]).toEqual([
      sha('b'),
      'id1',
      0,
      null,
      null,
      '1970-01-01T00:00:00.000Z',
    ]);
    expect(index.size).toBe(3);
  });
});
