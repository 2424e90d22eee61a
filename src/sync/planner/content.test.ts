import { describe, expect, it } from 'vitest';
import { fakeObservation, fakeState, planInput, remoteCopy } from '../../../test/helpers/plan-fakes.js';
import type { SyncPlan } from '../types.js';
import { planSync } from './plan-sync.js';

const rows = (plan: SyncPlan) => plan.items.map((i) => [i.path, i.action, i.credits]);

describe('planSync: rename, duplicate content, changed', () => {
  it('a tracked path that vanished and whose content appears at a new path is a free rename', () => {
    const observation = fakeObservation().file('docs/new.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('docs/old.md', { content: 'X', remoteId: '12' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items).toEqual([
      expect.objectContaining({
        path: 'docs/new.md',
        action: 'rename',
        credits: 0,
        reason: 'moved from docs/old.md (same content): no upload; the remote copy keeps the name docs/old.md',
        remoteName: 'docs/old.md',
        remoteId: '12',
        renamedFrom: { source: 'docs', path: 'docs/old.md' },
      }),
    ]);
    expect(plan.totals).toMatchObject({ renamed: 1, uploaded: 0, skipped: 0, creditsPlanned: 0 });
  });

  it('content that is already in the dataset under a path that still exists is a free duplicate', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).file('copy.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('a.md', { content: 'X', remoteId: '3' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(rows(plan)).toEqual([
      ['a.md', 'skip:unchanged', 0],
      ['copy.md', 'skip:duplicate-content', 0],
    ]);
    expect(plan.items[1]).toMatchObject({
      reason: 'same content as a.md already in the dataset',
      remoteId: '3',
      duplicateOf: { name: 'a.md', remoteId: '3', inThisRun: false },
    });
  });

  it('a file changed to content another tracked path holds is a duplicate, and its own old copy is stale', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).file('b.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('a.md', { content: 'X', remoteId: '1' }).tracked('b.md', { content: 'old', remoteId: '2' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items[1]).toMatchObject({
      path: 'b.md',
      action: 'skip:duplicate-content',
      credits: 0,
      staleRemoteId: '2',
      previousRemoteName: 'b.md',
    });
  });

  it('a changed file is never a rename, even when a vanished path held its new content', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).build();
    const tracked = fakeState()
      .tracked('a.md', { content: 'old', remoteId: '1' })
      .tracked('gone.md', { content: 'X', remoteId: '2' })
      .build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(rows(plan)).toEqual([
      ['a.md', 'skip:duplicate-content', 0],
      ['gone.md', 'deleted', 0],
    ]);
  });

  it('a vanished path whose remote copy failed processing cannot be renamed: the new path uploads', () => {
    const observation = fakeObservation().file('new.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('old.md', { content: 'X', remoteStatus: 'failed' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(rows(plan)).toEqual([
      ['new.md', 'upload', 5],
      ['old.md', 'deleted', 0],
    ]);
  });

  it('pairs several vanished and new paths with the same content in path order; the extra new path is a duplicate', () => {
    const observation = fakeObservation()
      .file('n1.md', { content: 'X' })
      .file('n2.md', { content: 'X' })
      .file('n3.md', { content: 'X' })
      .build();
    const tracked = fakeState().tracked('o1.md', { content: 'X', remoteId: '1' }).tracked('o2.md', { content: 'X', remoteId: '2' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items.map((i) => [i.path, i.action, i.renamedFrom?.path ?? i.duplicateOf?.name])).toEqual([
      ['n1.md', 'rename', 'o1.md'],
      ['n2.md', 'rename', 'o2.md'],
      ['n3.md', 'skip:duplicate-content', 'o1.md'],
    ]);
  });

  it('two new files with the same content: the first (by path) uploads, the other rides along for free', () => {
    const observation = fakeObservation().file('b.md', { content: 'X' }).file('a.md', { content: 'X' }).build();

    const plan = planSync(planInput({ observation }));

    expect(rows(plan)).toEqual([
      ['a.md', 'upload', 5],
      ['b.md', 'skip:duplicate-content', 0],
    ]);
    expect(plan.items[1]?.reason).toBe('same content as a.md, uploaded in this run');
  });

  it('content found only in the remote listing (another name) is a duplicate', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).build();
    const remote = [remoteCopy('elsewhere/a.md', { id: '77', content: 'X' }), remoteCopy('z.md', { id: '78', content: 'X' })];

    const plan = planSync(planInput({ observation, remote }));

    expect(plan.items[0]).toMatchObject({
      action: 'skip:duplicate-content',
      reason: 'same content as elsewhere/a.md already in the dataset',
      remoteId: '77',
    });
  });

  it('remote copies that failed processing or have no sha256 do not count as the content being there', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).build();
    const remote = [remoteCopy('b.md', { content: 'X', status: 'failed' }), remoteCopy('c.md', { sha: null })];

    const plan = planSync(planInput({ observation, remote }));

    expect(rows(plan)).toEqual([['a.md', 'upload', 5]]);
  });

  it('a rename across sources keeps the old source-prefixed remote name', () => {
    const observation = fakeObservation(['wiki', 'docs']).file('moved.md', { source: 'wiki', content: 'X' }).build();
    const tracked = fakeState(true).tracked('orig.md', { source: 'docs', content: 'X', remoteId: '5' }).build();

    const plan = planSync(planInput({ observation, tracked, multiSource: true }));

    expect(plan.items).toEqual([
      expect.objectContaining({
        source: 'wiki',
        path: 'moved.md',
        action: 'rename',
        remoteName: 'docs/orig.md',
        reason: 'moved from docs/orig.md (same content): no upload; the remote copy keeps the name docs/orig.md',
      }),
    ]);
  });

  it("another runner's rows (a source this run does not sync) are never a rename source: the same content is a free duplicate", () => {
    // Runners of one shared state, each with its own source names: r2 sees r5's rows, never walks them.
    const observation = fakeObservation(['r2']).file('shared/c.md', { source: 'r2', content: 'X' }).build();
    const tracked = fakeState(true).tracked('shared/c.md', { source: 'r5', content: 'X', remoteId: '5' }).build();

    const plan = planSync(planInput({ observation, tracked, multiSource: true }));

    const own = plan.items.find((i) => i.source === 'r2');
    expect([own?.action, own?.credits, own?.remoteId, own?.renamedFrom]).toEqual(['skip:duplicate-content', 0, '5', undefined]);
    expect(plan.items.filter((i) => i.action === 'rename')).toEqual([]);
  });

  it('a renamed file that was renamed before keeps the original remote name and stays unchanged', () => {
    const observation = fakeObservation().file('new.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('new.md', { content: 'X', remoteName: 'old.md', remoteId: '5' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items[0]).toMatchObject({ action: 'skip:unchanged', remoteName: 'old.md' });
  });
});

describe('planSync: multi-source remote names', () => {
  it.each([
    [false, 'guide/a.md'],
    [true, 'handbook/guide/a.md'],
  ])('multiSource=%s → an upload is named %s', (multiSource, remoteName) => {
    const observation = fakeObservation(['handbook']).file('guide/a.md', { source: 'handbook' }).build();

    const plan = planSync(planInput({ observation, multiSource }));

    expect(plan.items[0]).toMatchObject({ action: 'upload', remoteName });
  });

  it('the same path in two sources is two files, sorted by source', () => {
    const observation = fakeObservation(['b', 'a']).file('x.md', { source: 'b' }).file('x.md', { source: 'a' }).build();

    const plan = planSync(planInput({ observation, multiSource: true }));

    expect(plan.items.map((i) => [i.source, i.remoteName])).toEqual([
      ['a', 'a/x.md'],
      ['b', 'b/x.md'],
    ]);
  });
});
