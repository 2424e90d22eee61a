import { describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../shared/errors.js';
import { sourceIndex } from '../source-index.js';
import type { TrackedFile } from '../types.js';
import { evaluateCheck } from './evaluate.js';
import { parseChecks, type KnowledgeCheck } from './questions.js';
import { planCheckCalls } from './run-checks.js';

const check = (o: Partial<KnowledgeCheck> = {}): KnowledgeCheck => ({ question: 'q', expect: ['a.md'], topK: null, line: 1, ...o });

function tracked(source: string, path: string, remoteId: string, lastAction = 'upload'): TrackedFile {
  return {
    source,
    path,
    size: 1,
    mtimeNs: '1',
    inode: 1,
    sha256: 'a'.repeat(64),
    remoteName: path,
    remoteId,
    remoteStatus: 'processed',
    reprocessAttempts: 0,
    lastAction,
    lastReason: null,
    updatedAt: '2026-11-26T00:00:00.000Z',
  };
}

describe('planCheckCalls', () => {
  it('basic tier: one query per check, 1 credit each', () => {
    const plan = planCheckCalls([check(), check({ topK: 3 })], 5, false);
    expect(plan).toEqual({
      calls: [
        { kind: 'query', topK: 5, checks: [0], credits: 1 },
        { kind: 'query', topK: 3, checks: [1], credits: 1 },
      ],
      credits: 2,
      batched: false,
    });
  });

  it('advanced tier: batches of at most 20 questions sharing a top k, 1 credit per question', () => {
    const checks = [...Array.from({ length: 45 }, () => check()), check({ topK: 2 })];
    const plan = planCheckCalls(checks, 5, true);
    expect(plan.calls.map((c) => [c.kind, c.topK, c.checks.length, c.credits])).toEqual([
      ['batch', 5, 20, 20],
      ['batch', 5, 20, 20],
      ['batch', 5, 5, 5],
      ['batch', 2, 1, 1],
    ]);
    expect(plan.credits).toBe(46);
    expect(plan.calls[3]?.checks).toEqual([45]);
  });
});

describe('parseChecks', () => {
  it('reads questions, expectations and topK, with the line of each check', () => {
    expect(parseChecks('# checks\n- question: " where? "\n  expect: [a.md, "id:12"]\n  topK: 3\n', 'c.yaml')).toEqual([
      { question: 'where?', expect: ['a.md', 'id:12'], topK: 3, line: 2 },
    ]);
  });

  it('takes one expected path written alone as a list of one', () => {
    expect(parseChecks('- question: where?\n  expect: docs/a.md\n', 'c.yaml')).toEqual([
      { question: 'where?', expect: ['docs/a.md'], topK: null, line: 1 },
    ]);
  });

  it.each([
    ['question: x\n', /c\.yaml:1: the file must be a YAML list/],
    ['- question: x\n  expect: 3\n', /c\.yaml:2: \[0\]\.expect: a source path, or a list of source paths, is required/],
    ['- question: [x\n', /c\.yaml:1: YAML syntax/],
    ['[]\n', /c\.yaml:1: no checks/],
    ['- question: x\n  expect: [a.md, 3]\n', /c\.yaml:2: \[0\]\.expect\[1\]: a source path \(text\), or id:N/],
  ])('%j is refused naming the file, line, index and field', (text, message) => {
    let thrown: unknown;
    try {
      parseChecks(text, 'c.yaml');
    } catch (err) {
      thrown = err;
    }
    expect(isKbsyncError(thrown, 'usage')).toBe(true);
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('evaluateCheck', () => {
  const index = sourceIndex({
    tracked: [tracked('docs', 'a.md', '1'), tracked('docs', 'gone.md', '2', 'deleted'), tracked('docs', 'twin.md', '1')],
    listing: [
      { id: '1', name: 'a.md', sha256: null, status: 'processed' },
      { id: '3', name: 'a.md', sha256: null, status: 'processed' },
      { id: '9', name: 'by-hand.md', sha256: null, status: 'processed' },
    ],
    sourceNames: ['docs'],
  });
  const results = (...ids: string[]) => ids.map((id) => ({ knowledgeSourceId: id, score: 0.5, chunkIndex: 0 }));

  it('a path matches the current copy that names it, and every path sharing that copy; id:N matches the id', () => {
    const outcome = evaluateCheck(
      check({ expect: ['twin.md', 'docs/a.md', 'id:9'] }),
      5,
      results('9', '1'),
      index.refOf,
      index.currentPaths,
    );
    expect(outcome.passed).toBe(true);
    expect(outcome.expected.map((e) => [e.expect, e.rank])).toEqual([
      ['twin.md', 2],
      ['docs/a.md', 2],
      ['id:9', 1],
    ]);
    expect(outcome.results.map((h) => [h.copy, h.names])).toEqual([
      ['untracked', ['by-hand.md']],
      ['current', ['a.md', 'twin.md']],
    ]);
  });

  it('a path names one file: sub/a.md is not a.md, and docs/sub/a.md (source/path) is sub/a.md', () => {
    const nested = sourceIndex({
      tracked: [tracked('docs', 'a.md', '1'), tracked('docs', 'sub/a.md', '2')],
      listing: null,
      sourceNames: ['docs'],
    });
    const miss = evaluateCheck(check({ expect: ['sub/a.md'] }), 1, results('1'), nested.refOf, nested.currentPaths);
    const hit = evaluateCheck(check({ expect: ['docs/sub/a.md'] }), 1, results('2'), nested.refOf, nested.currentPaths);
    expect([miss.passed, miss.expected[0]?.note]).toEqual([false, 'not in the top 1']);
    expect([hit.passed, hit.expected[0]?.rank]).toEqual([true, 1]);
  });

  it('a copy shared by a deleted path and a live one is current for the live one only', () => {
    const shared = sourceIndex({
      tracked: [tracked('docs', 'old.md', '1', 'deleted'), tracked('docs', 'new.md', '1')],
      listing: null,
      sourceNames: ['docs'],
    });
    const outcome = evaluateCheck(check({ expect: ['new.md', 'old.md'] }), 1, results('1'), shared.refOf, shared.currentPaths);
    expect(outcome.expected.map((e) => [e.expect, e.rank])).toEqual([
      ['new.md', 1],
      ['old.md', null],
    ]);
    expect(outcome.results[0]).toMatchObject({ copy: 'current', names: ['new.md'] });
  });

  it('a stale older copy or a deleted file does not count, and says so', () => {
    const outcome = evaluateCheck(check({ expect: ['a.md', 'gone.md'] }), 5, results('3', '2'), index.refOf, index.currentPaths);
    expect(outcome.passed).toBe(false);
    expect(outcome.expected).toEqual([
      { expect: 'a.md', rank: null, outdatedRanks: [1], note: 'only a stale older copy (the file changed since) came back, at rank 1' },
      { expect: 'gone.md', rank: null, outdatedRanks: [2], note: 'only a copy of a file deleted locally came back, at rank 2' },
    ]);
  });
});
