import { describe, expect, it } from 'vitest';
import type { PlanAction, PlanItem } from '../types.js';
import { ACTION_BUCKET, summarize, tallyPlan } from './totals.js';

function item(path: string, action: PlanAction, credits = 0): PlanItem {
  return { source: 'docs', path, action, reason: 'r', credits, size: 1, sha256: null, remoteName: path, remoteId: null, wasTracked: false };
}

describe('tallyPlan', () => {
  it('counts every action and sums the planned credits, as summarize does for a plan', () => {
    const actions = Object.keys(ACTION_BUCKET) as PlanAction[];
    // Action k appears k + 1 times; uploads and reprocesses carry credits.
    const items = actions.flatMap((action, k) =>
      Array.from({ length: k + 1 }, (_, n) => item(`${action}-${n}.md`, action, action === 'upload' ? 3 : action === 'reprocess' ? 1 : 0)),
    );

    const { totals, counts } = tallyPlan(items, 2);

    expect(counts).toEqual(Object.fromEntries(actions.map((action, k) => [action, k + 1])));
    expect(totals).toEqual(summarize(items, { credits: 2 }));
    // upload (1 item x 3) + reprocess (2 items x 1) + the reindex's 2.
    expect(totals).toEqual({
      uploaded: 3,
      unchanged: 3,
      renamed: 4 + 5,
      skipped: 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17,
      deferred: 18 + 19,
      failed: 20,
      creditsPlanned: 3 + 2 + 2,
      creditsSpent: 0,
    });
  });
});
