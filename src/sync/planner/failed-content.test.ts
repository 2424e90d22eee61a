import { describe, expect, it } from 'vitest';
import { fakeObservation, fakeState, planInput } from '../../../test/helpers/plan-fakes.js';
import type { SyncPlan } from '../types.js';
import { planSync } from './plan-sync.js';

/** Content whose copy the service could not parse: the same bytes of the same type would fail again. */
const PARSE = 'parse_failed: not a valid DOCX file: the ZIP archive is truncated';
const rows = (plan: SyncPlan) => plan.items.map((i) => [i.path, i.action, i.credits]);
const failed = (error: string | null) =>
  fakeState().tracked('report.docx', { content: 'X', remoteId: '7', remoteStatus: 'failed', remoteError: error });

describe('planSync: content whose copy failed for good', () => {
  it('moved: the new path is skip:remote-failed against that copy, nothing bought; the old path is deleted', () => {
    const observation = fakeObservation().file('archive/report-2024.docx', { content: 'X' }).build();

    const plan = planSync(planInput({ observation, tracked: failed(PARSE).build() }));

    expect(rows(plan)).toEqual([
      ['archive/report-2024.docx', 'skip:remote-failed', 0],
      ['report.docx', 'deleted', 0],
    ]);
    expect(plan.items[0]).toMatchObject({
      reason: `the same content failed before as report.docx: ${PARSE}; not uploaded again: the service says the same file would fail again (fix the file: it is uploaded when its content changes)`,
      remoteName: 'report.docx',
      remoteId: '7',
      failedCopy: { name: 'report.docx', remoteId: '7', error: PARSE },
    });
    expect(plan.totals).toMatchObject({ uploaded: 0, failed: 1, creditsPlanned: 0 });
  });

  it('copied beside it, or a changed file that now holds those bytes: the same', () => {
    const observation = fakeObservation()
      .file('copy.docx', { content: 'X' })
      .file('other.docx', { content: 'X' })
      .file('report.docx', { content: 'X' })
      .build();
    const tracked = failed(PARSE).tracked('other.docx', { content: 'before', remoteId: '8' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(rows(plan)).toEqual([
      ['copy.docx', 'skip:remote-failed', 0],
      ['other.docx', 'skip:remote-failed', 0],
      ['report.docx', 'skip:remote-failed', 0],
    ]);
    expect(plan.items[1]).toMatchObject({ staleRemoteId: '8', failedCopy: { remoteId: '7' } });
  });

  it.each([
    ['a failure that may pass (the service’s own fault)', 'internal: the disk was full', 'copy.docx'],
    ['a failure with no known code', 'parser crashed', 'copy.docx'],
    ['the service lost its stored copy (a new upload is what helps)', 'file_missing: the stored copy is gone', 'copy.docx'],
    ['the same bytes under another type (another parser reads them)', PARSE, 'copy.txt'],
  ])('uploaded again after %s', (_, error, path) => {
    const observation = fakeObservation().file(path, { content: 'X' }).file('report.docx', { content: 'X' }).build();

    const plan = planSync(planInput({ observation, tracked: failed(error).build() }));

    expect(plan.items.find((i) => i.path === path)).toMatchObject({ action: 'upload', credits: 5 });
  });

  it('a copy of the content that did not fail wins: the new path points at it', () => {
    const observation = fakeObservation().file('copy.docx', { content: 'X' }).file('good.docx', { content: 'X' }).build();
    const tracked = failed(PARSE).tracked('good.docx', { content: 'X', remoteId: '9' }).build();

    const plan = planSync(planInput({ observation, tracked }));

    expect(plan.items.find((i) => i.path === 'copy.docx')).toMatchObject({ action: 'skip:duplicate-content', remoteId: '9' });
  });
});
