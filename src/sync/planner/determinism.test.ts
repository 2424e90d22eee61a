import { describe, expect, it } from 'vitest';
import { fakeBudget, fakeObservation, fakeState, planInput, remoteCopy } from '../../../test/helpers/plan-fakes.js';
import { createPrng } from '../../../test/helpers/prng.js';
import { MIB } from '../../shared/plans.js';
import type { PlanInput } from '../types.js';
import { planSync } from './plan-sync.js';

function shuffled<T>(xs: readonly T[], next: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** One input exercising every action, over two sources. */
function richInput(): PlanInput {
  const observation = fakeObservation(['docs', 'wiki'])
    .file('new-b.md', { content: 'dup' })
    .file('new-a.md', { content: 'dup' })
    .file('same.md')
    .file('changed.md', { content: 'v2' })
    .file('moved.md', { source: 'wiki', content: 'M' })
    .file('big.csv', { size: 600 * MIB })
    .file('mid.csv', { size: 9 * MIB })
    .file('hot.md', { sha: null })
    .file('failed.md')
    .file('failed-twice.md')
    .file('remote-dup.md', { content: 'R' })
    .skipped('.env', 'secret', { detail: 'dotenv file' })
    .skipped('a.exe', 'unsupported', { detail: '.exe', size: 10 })
    .skipped('link.md', 'symlink')
    .skipped('locked.md', 'unreadable', { detail: 'EACCES' })
    .skipped('node_modules', 'ignored', { detail: 'node_modules/ is never synced' })
    .build();
  const tracked = fakeState(true)
    .tracked('same.md')
    .tracked('changed.md', { content: 'v1' })
    .tracked('orig.md', { content: 'M' })
    .tracked('removed.md')
    .tracked('failed.md', { remoteStatus: 'failed', remoteError: 'boom' })
    .tracked('failed-twice.md', { remoteStatus: 'failed', reprocessAttempts: 2 })
    .build();
  const remote = [remoteCopy('x/y.md', { id: '90', content: 'R' }), remoteCopy('docs/same.md', { id: '1', content: 'docs/same.md' })];
  return planInput({
    observation,
    tracked,
    remote,
    multiSource: true,
    plan: 'pro',
    reindexMinChangedFiles: 2,
    budget: fakeBudget({ run: 16 }),
  });
}

describe('planSync: determinism', () => {
  it('writes every reason in ASCII (one other character makes V8 hold a whole --json chunk as two-byte text)', () => {
    const plan = planSync(richInput());

    for (const item of plan.items) expect([item.path, item.reason]).toEqual([item.path, expect.stringMatching(/^[\x20-\x7e]*$/)]);
  });

  it('covers every action in the rich input', () => {
    const plan = planSync(richInput());

    expect(plan.items.map((i) => `${i.source}/${i.path} ${i.action}`)).toEqual([
      'docs/.env skip:secret',
      'docs/a.exe skip:unsupported',
      'docs/big.csv skip:too-large',
      'docs/changed.md upload',
      'docs/failed-twice.md skip:remote-failed',
      'docs/failed.md reprocess',
      'docs/hot.md defer:changing',
      'docs/link.md skip:ignored',
      'docs/locked.md skip:unreadable',
      'docs/mid.csv defer:over-budget',
      'docs/new-a.md defer:over-budget',
      'docs/new-b.md defer:over-budget',
      'docs/node_modules skip:ignored',
      'docs/remote-dup.md skip:duplicate-content',
      'docs/removed.md deleted',
      'docs/same.md skip:unchanged',
      'wiki/moved.md rename',
    ]);
    expect(plan.totals).toEqual({
      uploaded: 2,
      unchanged: 1,
      renamed: 1,
      skipped: 8,
      deferred: 4,
      failed: 1,
      creditsPlanned: 12,
      creditsSpent: 0,
    });
    const { uploaded, unchanged, renamed, skipped, deferred, failed } = plan.totals;
    expect(uploaded + unchanged + renamed + skipped + deferred + failed).toBe(plan.items.length);
  });

  it('the same input twice gives the same plan', () => {
    expect(planSync(richInput())).toEqual(planSync(richInput()));
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('shuffled input order (seed %i) gives the same plan', (seed) => {
    const base = richInput();
    const next = createPrng(seed).next;
    const input: PlanInput = {
      ...base,
      observation: {
        ...base.observation,
        files: shuffled(base.observation.files, next),
        skipped: shuffled(base.observation.skipped, next),
        sources: shuffled(base.observation.sources, next),
      },
      tracked: new Map(shuffled([...base.tracked], next)),
      remote: shuffled(base.remote ?? [], next),
    };

    expect(JSON.stringify(planSync(input))).toBe(JSON.stringify(planSync(base)));
  });

  it('sorted input (no re-sort) and shuffled input (sorted by the planner) give the same plan', () => {
    const base = richInput();
    const byKey = (a: { source: string; path: string }, b: { source: string; path: string }) =>
      a.source + '\0' + a.path < b.source + '\0' + b.path ? -1 : 1;
    const sorted: PlanInput = {
      ...base,
      observation: { ...base.observation, files: [...base.observation.files].sort(byKey) },
      tracked: new Map([...base.tracked].sort(([a], [b]) => (a < b ? -1 : 1))),
    };
    const shuffledInput: PlanInput = {
      ...base,
      observation: { ...base.observation, files: shuffled(base.observation.files, createPrng(99).next) },
    };

    expect(JSON.stringify(planSync(sorted))).toBe(JSON.stringify(planSync(shuffledInput)));
  });

  it('does not modify its input', () => {
    const input = richInput();
    const before = JSON.stringify({ ...input, tracked: [...input.tracked] });

    planSync(input);

    expect(JSON.stringify({ ...input, tracked: [...input.tracked] })).toBe(before);
  });
});
