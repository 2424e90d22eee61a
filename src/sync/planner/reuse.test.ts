import { describe, expect, it } from 'vitest';
import { fakeObservation, fakeSha, fakeState, planInput, remoteCopy } from '../../../test/helpers/plan-fakes.js';
import type { HeldCopy } from '../types.js';
import { planSync } from './plan-sync.js';

const held = (id: string, content: string, status: HeldCopy['status'] = 'processed', name = 'a.md'): HeldCopy => ({
  remoteId: id,
  sha256: fakeSha(content),
  remoteName: name,
  status,
});

describe('planSync: reuse of held copies, and empty files', () => {
  it('a path changed back to content a held copy has is pointed at it for 0 credits; its copy before becomes stale', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('a.md', { content: 'Y', remoteId: '2' }).build();

    const plan = planSync(planInput({ observation, tracked, held: () => [held('1', 'X')] }));

    expect(plan.items).toEqual([
      expect.objectContaining({
        path: 'a.md',
        action: 'reuse',
        credits: 0,
        reason: 'the dataset holds this content (file 1, uploaded as a.md): no upload; the copy it replaces (id 2) stays, stale',
        remoteName: 'a.md',
        remoteId: '1',
        staleRemoteId: '2',
        reuses: { remoteId: '1', name: 'a.md', status: 'processed' },
      }),
    ]);
    expect(plan.totals).toMatchObject({ renamed: 1, uploaded: 0, creditsPlanned: 0 });
  });

  it('a copy that failed processing, or whose outcome is unknown, is never reused', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).file('b.md', { content: 'Z' }).build();
    const tracked = fakeState().tracked('a.md', { content: 'Y', remoteId: '2' }).build();

    const plan = planSync(
      planInput({ observation, tracked, held: () => [held('1', 'X', 'failed'), held('3', 'Z', 'unknown'), held('4', 'Z', null)] }),
    );

    expect(plan.items.map((i) => [i.path, i.action])).toEqual([
      ['a.md', 'upload'],
      ['b.md', 'upload'],
    ]);
  });

  it('with the listing fetched, it decides: a copy it does not show is gone, and its status there is the current one', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).file('b.md', { content: 'Z' }).build();
    const tracked = fakeState().build();
    const remote = [remoteCopy('elsewhere.md', { id: '3', content: 'Z', status: 'failed' })];

    const plan = planSync(planInput({ observation, tracked, remote, held: () => [held('1', 'X'), held('3', 'Z', 'processed', 'b.md')] }));

    expect(plan.items.map((i) => [i.path, i.action])).toEqual([
      ['a.md', 'upload'],
      ['b.md', 'upload'],
    ]);
  });

  it('a processed copy is preferred to one still queued, then the smallest id, whatever the order given', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).build();
    const tracked = fakeState().build();
    const copies = [held('5', 'X', 'queued'), held('9', 'X'), held('7', 'X')];

    for (const list of [copies, [...copies].reverse()]) {
      const plan = planSync(planInput({ observation, tracked, held: () => list }));
      expect(plan.items[0]).toMatchObject({ action: 'reuse', remoteId: '7' });
    }
  });

  it('a tracked path that holds the content wins over a held copy (a duplicate, as before)', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).file('b.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('b.md', { content: 'X', remoteId: '8' }).build();

    const plan = planSync(planInput({ observation, tracked, held: () => [held('1', 'X')] }));

    expect(plan.items[0]).toMatchObject({ path: 'a.md', action: 'skip:duplicate-content', remoteId: '8' });
  });

  it('a 0-byte file is skip:empty for 0 credits; a tracked one keeps pointing at its earlier copy', () => {
    const observation = fakeObservation().file('new.md', { content: '', size: 0 }).file('was.md', { content: '', size: 0 }).build();
    const tracked = fakeState().tracked('was.md', { content: 'Y', remoteId: '4' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items.map((i) => [i.path, i.action, i.credits, i.remoteId, i.reason])).toEqual([
      ['new.md', 'skip:empty', 0, null, 'empty file (0 bytes): nothing to upload'],
      [
        'was.md',
        'skip:empty',
        0,
        '4',
        'empty file (0 bytes): nothing to upload; the copy of its earlier content (id 4) remains in the dataset',
      ],
    ]);
    expect(plan.totals).toMatchObject({ skipped: 2, uploaded: 0, creditsPlanned: 0 });
  });
});

describe('planSync: a held copy the listing shows under the path name', () => {
  it('is a reuse, not an adoption, when the listing was fetched this pass', () => {
    const observation = fakeObservation().file('a.md', { content: 'X' }).build();
    const tracked = fakeState().tracked('a.md', { content: 'Y', remoteId: '2' }).build();
    const remote = [remoteCopy('a.md', { id: '1', content: 'X' }), remoteCopy('a.md', { id: '2', content: 'Y' })];

    const plan = planSync(planInput({ observation, tracked, remote, held: () => [held('1', 'X')] }));
    const adopted = planSync(planInput({ observation, tracked, remote }));

    expect(plan.items[0]).toMatchObject({ action: 'reuse', remoteId: '1', staleRemoteId: '2' });
    expect(adopted.items[0]).toMatchObject({ action: 'skip:unchanged', remoteId: '1' });
  });
});
