import { describe, expect, it } from 'vitest';
import { fakeObservation, fakeSha, fakeState, planInput, remoteCopy } from '../../../test/helpers/plan-fakes.js';
import type { SyncPlan } from '../types.js';
import { planSync } from './plan-sync.js';

function itemAt(plan: SyncPlan, path: string, source = 'docs') {
  const item = plan.items.find((i) => i.path === path && i.source === source);
  if (item === undefined) throw new Error(`no item for ${source}/${path}`);
  return item;
}

describe('planSync: one action per situation', () => {
  it('uploads a new file for its upload cost', () => {
    const observation = fakeObservation()
      .file('docs/a.md', { size: 6 * 1_048_576 })
      .build();

    const plan = planSync(planInput({ observation }));

    expect(plan.items).toEqual([
      expect.objectContaining({
        path: 'docs/a.md',
        action: 'upload',
        reason: 'new file',
        credits: 6,
        cost: 6,
        remoteName: 'docs/a.md',
        remoteId: null,
        wasTracked: false,
      }),
    ]);
    expect(plan.totals).toEqual({
      uploaded: 1,
      unchanged: 0,
      renamed: 0,
      skipped: 0,
      deferred: 0,
      failed: 0,
      creditsPlanned: 6,
      creditsSpent: 0,
    });
  });

  it('skips a tracked file whose sha256 matches', () => {
    const observation = fakeObservation().file('a.md').build();
    const tracked = fakeState().tracked('a.md', { remoteId: '17' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(itemAt(plan, 'a.md')).toMatchObject({
      action: 'skip:unchanged',
      reason: 'unchanged since last sync',
      credits: 0,
      remoteId: '17',
    });
  });

  it('skips by stat fingerprint when the sha256 was not computed (size, mtime and inode match)', () => {
    const observation = fakeObservation().file('a.md', { sha: null, size: 5, mtimeNs: '42', inode: 7 }).build();
    const tracked = fakeState().tracked('a.md', { size: 5, mtimeNs: '42', inode: 7 }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(itemAt(plan, 'a.md')).toMatchObject({ action: 'skip:unchanged', sha256: fakeSha('docs/a.md') });
  });

  it.each([
    ['queued', 'unchanged since last sync (remote status: queued)'],
    ['processing', 'unchanged since last sync (remote status: processing)'],
    ['unknown', 'unchanged since last sync (remote status: unknown)'],
    ['processed', 'unchanged since last sync'],
    [null, 'unchanged since last sync'],
  ] as const)('an unchanged file with remote status %s is skipped: %s', (remoteStatus, reason) => {
    const observation = fakeObservation().file('a.md').build();
    const tracked = fakeState().tracked('a.md', { remoteStatus }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(itemAt(plan, 'a.md')).toMatchObject({ action: 'skip:unchanged', reason, credits: 0 });
  });

  it('uploads a changed file and reports its previous remote copy as stale', () => {
    const before = fakeSha('old');
    const after = fakeSha('new');
    const observation = fakeObservation().file('a.md', { sha: after }).build();
    const tracked = fakeState().tracked('a.md', { sha256: before, remoteId: '9' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(itemAt(plan, 'a.md')).toMatchObject({
      action: 'upload',
      reason: `content changed since last sync (sha256 ${before.slice(0, 8)} -> ${after.slice(0, 8)}); the previous remote copy (id 9) stays, stale (the API has no delete or replace)`,
      credits: 5,
      previousSha256: before,
      previousRemoteName: 'a.md',
      staleRemoteId: '9',
      remoteName: 'a.md',
    });
  });

  it('uploads a tracked file that never reached the dataset, saying what was decided last time', () => {
    const observation = fakeObservation().file('big.md').build();
    const tracked = fakeState().tracked('big.md', { remoteId: null, remoteStatus: null, lastAction: 'skip:too-large' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(itemAt(plan, 'big.md')).toMatchObject({
      action: 'upload',
      reason: 'not in the dataset yet (last decision: skip:too-large)',
      credits: 5,
    });
  });

  it('defers a file whose hash was deferred (it changed while read)', () => {
    const observation = fakeObservation().file('a.md', { sha: null }).file('b.md', { sha: null }).build();
    const tracked = fakeState().tracked('b.md').build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items.map((i) => [i.path, i.action, i.credits, i.reason])).toEqual([
      ['a.md', 'defer:changing', 0, 'changed while it was being read; hashed again on the next pass'],
      ['b.md', 'defer:changing', 0, 'changed while it was being read; hashed again on the next pass'],
    ]);
    expect(plan.totals.deferred).toBe(2);
  });

  it.each([
    [0, 'reprocess', 5, 'remote processing failed: parser crashed; reprocess 1 of 2'],
    [1, 'reprocess', 5, 'remote processing failed: parser crashed; reprocess 2 of 2'],
    [2, 'skip:remote-failed', 0, 'remote processing failed: parser crashed; not retried (already reprocessed 2 of 2 times)'],
  ] as const)('a failed remote copy after %i reprocesses → %s', (attempts, action, credits, reason) => {
    const observation = fakeObservation().file('a.md').build();
    const tracked = fakeState()
      .tracked('a.md', { remoteId: '4', remoteStatus: 'failed', reprocessAttempts: attempts, remoteError: 'parser crashed' })
      .build();

    const plan = planSync(planInput({ observation, tracked, maxReprocessAttempts: 2 }));

    expect(itemAt(plan, 'a.md')).toMatchObject({ action, credits, reason, remoteId: '4' });
  });

  it.each([
    ['parse_failed: not a valid DOCX file', 'skip:remote-failed', 0],
    ['unsupported_type: no parser for .docx files', 'skip:remote-failed', 0],
    ['file_missing: the stored copy of the file is missing; upload it again', 'skip:remote-failed', 0],
    ['internal: could not read the stored file (EIO)', 'reprocess', 5],
    // The hosted service writes no code: reprocessed as before.
    ['Processing failed', 'reprocess', 5],
    ['timeout: no known code', 'reprocess', 5],
  ] as const)('a failed remote copy with error "%s" → %s (planned %i)', (remoteError, action, credits) => {
    const observation = fakeObservation().file('a.md').build();
    const tracked = fakeState().tracked('a.md', { remoteId: '4', remoteStatus: 'failed', reprocessAttempts: 0, remoteError }).build();

    const plan = planSync(planInput({ observation, tracked, maxReprocessAttempts: 2 }));

    expect(itemAt(plan, 'a.md')).toMatchObject({ action, credits, remoteId: '4' });
    expect(itemAt(plan, 'a.md').reason).toContain(`remote processing failed: ${remoteError}`);
    expect(plan.totals).toMatchObject({ creditsPlanned: credits, failed: action === 'reprocess' ? 0 : 1 });
    if (action === 'skip:remote-failed') {
      expect(itemAt(plan, 'a.md').reason).toMatch(
        /; not reprocessed: the service says the same file would fail again \(fix the file: it is uploaded again when its content changes\)$/,
      );
    }
  });

  it('counts a failed file that is not retried as failed, and says so when reprocessing is off', () => {
    const observation = fakeObservation().file('a.md').build();
    const tracked = fakeState().tracked('a.md', { remoteStatus: 'failed' }).build();

    const plan = planSync(planInput({ observation, tracked, maxReprocessAttempts: 0 }));

    expect(itemAt(plan, 'a.md').reason).toBe('remote processing failed: no reason given; not retried (upload.maxReprocessAttempts is 0)');
    expect(plan.totals).toMatchObject({ failed: 1, uploaded: 0, creditsPlanned: 0 });
  });

  it('uploads a changed file even when its old copy failed processing (new content, not a reprocess)', () => {
    const observation = fakeObservation().file('a.md', { content: 'v2' }).build();
    const tracked = fakeState().tracked('a.md', { content: 'v1', remoteStatus: 'failed' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(itemAt(plan, 'a.md')).toMatchObject({ action: 'upload', credits: 5 });
  });

  it.each([
    ['ignored', 'matches .gitignore: drafts/', 'skip:ignored', 'ignored: matches .gitignore: drafts/'],
    ['secret', '.env files are never uploaded', 'skip:secret', 'looks like a secret, never uploaded: .env files are never uploaded'],
    ['unsupported', '.exe', 'skip:unsupported', 'unsupported file type: .exe'],
    ['symlink', 'points outside the source root', 'skip:ignored', 'symbolic link, not followed: points outside the source root'],
    ['unreadable', 'EACCES: permission denied', 'skip:unreadable', 'unreadable: EACCES: permission denied'],
    ['bad-name', 'its name is not valid UTF-8; rename it', 'skip:bad-name', 'its name is not valid UTF-8; rename it'],
    ['ignored', '', 'skip:ignored', 'ignored'],
  ] as const)('a path skipped by the source as %s (%s) → %s', (why, detail, action, reason) => {
    const observation = fakeObservation().skipped('x', why, { detail, size: 3 }).build();

    const plan = planSync(planInput({ observation }));

    expect(plan.items).toEqual([expect.objectContaining({ path: 'x', action, reason, credits: 0, size: 3 })]);
    expect(plan.totals.skipped).toBe(1);
  });

  it('a tracked path that is now skipped keeps its remote copy and is not reported as deleted', () => {
    const observation = fakeObservation().skipped('notes.md', 'ignored', { detail: 'matches .kbsyncignore: notes.md' }).build();
    const tracked = fakeState().tracked('notes.md', { remoteId: '3' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items).toEqual([
      expect.objectContaining({
        action: 'skip:ignored',
        reason: 'ignored: matches .kbsyncignore: notes.md; the copy from an earlier sync remains in the dataset',
        remoteId: '3',
        wasTracked: true,
      }),
    ]);
  });

  it('a path reported both as a file and as skipped is planned as the file', () => {
    const observation = fakeObservation().file('a.md').skipped('a.md', 'ignored').build();

    const plan = planSync(planInput({ observation }));

    expect(plan.items.map((i) => i.action)).toEqual(['upload']);
  });

  it('refuses an observation that lists the same file twice (a source bug)', () => {
    const observation = fakeObservation().file('a.md').file('a.md').build();

    expect(() => planSync(planInput({ observation }))).toThrow(expect.objectContaining({ code: 'internal' }));
  });

  it.each([
    [{ remoteId: '8' }, ['docs'], 'removed locally; the remote copy remains (the API has no delete)'],
    [{ remoteId: null }, ['docs'], 'removed locally (it was never in the dataset)'],
    [{ remoteId: '8' }, ['other'], 'source docs is no longer synced; the remote copy remains (the API has no delete)'],
  ] as const)('a tracked path that is gone (%o, sources %o) is deleted: %s', (row, sources, reason) => {
    const observation = fakeObservation([...sources]).build();
    const tracked = fakeState().tracked('gone.md', row).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items).toEqual([expect.objectContaining({ path: 'gone.md', action: 'deleted', reason, credits: 0 })]);
    expect(plan.totals).toMatchObject({ skipped: 1, creditsPlanned: 0 });
  });

  it('adopts a remote copy with this exact name and content (state lost) instead of uploading again', () => {
    const observation = fakeObservation().file('a.md').build();
    const remote = [remoteCopy('a.md', { id: '55', content: 'docs/a.md' })];

    const plan = planSync(planInput({ observation, remote }));

    expect(itemAt(plan, 'a.md')).toMatchObject({
      action: 'skip:unchanged',
      reason: 'already in the dataset under this name (remote id 55); recorded without upload',
      remoteId: '55',
      credits: 0,
    });
  });

  it('does not adopt a same-name remote copy whose processing failed or whose content differs', () => {
    const observation = fakeObservation().file('a.md').file('b.md').build();
    const remote = [remoteCopy('a.md', { content: 'docs/a.md', status: 'failed' }), remoteCopy('b.md', { content: 'other' })];

    const plan = planSync(planInput({ observation, remote }));

    expect(plan.items.map((i) => i.action)).toEqual(['upload', 'upload']);
  });
});

describe('planSync: a file listed twice is a source bug', () => {
  it.each([
    ['both unchanged', (o: ReturnType<typeof fakeObservation>) => o.file('a.md').file('a.md'), true],
    ['unsorted, among others', (o: ReturnType<typeof fakeObservation>) => o.file('b.md').file('a.md').file('c.md').file('a.md'), true],
    ['one new, one unchanged', (o: ReturnType<typeof fakeObservation>) => o.file('a.md').file('a.md', { content: 'other' }), true],
  ])('%s → internal error', (_label, add, trackA) => {
    const observation = add(fakeObservation()).build();
    const tracked = trackA ? fakeState().tracked('a.md').tracked('b.md').tracked('c.md').build() : new Map();

    expect(() => planSync(planInput({ observation, tracked }))).toThrow(expect.objectContaining({ code: 'internal' }));
  });
});
