import { describe, expect, it } from 'vitest';
import { fakeBudget, fakeObservation, fakeSha, fakeState, planInput } from '../../../test/helpers/plan-fakes.js';
import { MIB } from '../../shared/plans.js';
import { trackedKey } from '../tracked/keys.js';
import { planSync } from '../planner/plan-sync.js';
import { explainItem, findItems } from './explain.js';

function setup() {
  const observation = fakeObservation()
    .file('new.md', { size: 6 * MIB + 1 })
    .file('changed.md', { content: 'v2' })
    .file('big.csv', { size: 9 * MIB })
    .file('moved.md', { content: 'M' })
    .file('late.md', { size: 8 * MIB })
    .build();
  const tracked = fakeState()
    .tracked('changed.md', { content: 'v1', remoteId: '31', updatedAt: '2024-05-02T10:00:00.000Z' })
    .tracked('orig.md', { content: 'M', remoteId: '12' })
    .build();
  const plan = planSync(
    planInput({ observation, tracked, limits: { maxFileBytes: 8 * MIB }, budget: fakeBudget({ day: 2000 }, { day: 1985 }) }),
  );
  return { plan, tracked };
}

function explain(path: string) {
  const { plan, tracked } = setup();
  const [item] = findItems(plan, path);
  if (item === undefined) throw new Error(`no item ${path}`);
  return explainItem(item, tracked.get(trackedKey(item.source, item.path)), plan).split('\n');
}

describe('explainItem', () => {
  it('an upload: decision, credits with the formula, exact size against the limit, sha256, the name it gets, budget', () => {
    const lines = explain('new.md');

    expect(lines).toEqual([
      'docs/new.md',
      '  decision:  upload: new file',
      '  credits:   7 (upload: 5, plus 1 per started MB over 5 MB)',
      '  size:      6 MB (6,291,457 bytes); within the limit of 8 MB (limits.maxFileBytes)',
      `  sha256:    ${fakeSha('docs/new.md')}`,
      '  remote:    will be stored as new.md',
      '  state:     not tracked before this plan',
      '  budget:    this plan admits 12; used before it: run 0 of 1,000,000, day 1,985 of 2,000, month 0 of 1,000,000',
    ]);
  });

  it('a changed file names its stale previous copy and the state it replaces', () => {
    const lines = explain('changed.md');

    expect(lines).toContain(`  previous sha256:  ${fakeSha('v1')}`);
    expect(lines).toContain('  stale copy:       changed.md, id 31: stays in the dataset (the API has no delete or replace)');
    expect(lines.find((l) => l.includes('state:'))).toBe(
      `  state:            100 bytes, sha256 ${fakeSha('v1').slice(0, 12)}…, remote id 31 (processed); updated 2024-05-02T10:00:00.000Z; last decision upload (new file)`,
    );
  });

  it("the state names the remote copy's chunk count once the listing gave it", () => {
    const { plan, tracked } = setup();
    const [item] = findItems(plan, 'changed.md');
    if (item === undefined) throw new Error('no item changed.md');
    const row = tracked.get(trackedKey(item.source, item.path));
    if (row === undefined) throw new Error('changed.md is not tracked');
    const state = (remoteChunks: number) =>
      explainItem(item, { ...row, remoteChunks }, plan)
        .split('\n')
        .find((l) => l.includes('state:'));

    expect(state(3)).toContain('remote id 31 (processed, 3 chunks);');
    expect(state(1)).toContain('remote id 31 (processed, 1 chunk);');
  });

  it('a rename says where it moved from and which name the remote copy keeps', () => {
    expect(explain('moved.md')).toContain('  moved from:  docs/orig.md; the remote copy keeps the name orig.md');
  });

  it('a too-large file shows the limit that applied', () => {
    expect(explain('big.csv')).toEqual(
      expect.arrayContaining([
        '  decision:  skip:too-large: over limits.maxFileBytes (8 MB; file is 9 MB)',
        '  credits:   0',
        '  size:      9 MB (9,437,184 bytes); over the limit of 8 MB (limits.maxFileBytes)',
        '  remote:    none yet (it would be named big.csv)',
      ]),
    );
  });

  it('a deferred file says what it would cost and which budget setting stopped it, with the usage', () => {
    const lines = explain('late.md');

    expect(lines).toEqual(
      expect.arrayContaining([
        '  decision:    defer:over-budget: would exceed maxCreditsPerDay (1,997 + 8 > 2,000); upload (new file) waits for the next UTC day',
        '  credits:     0 now; it would cost 8',
        '  stopped by:  maxCreditsPerDay = 2,000; 1,985 already used or reserved this day before this plan',
      ]),
    );
  });
});

describe('findItems', () => {
  it.each([
    ['new.md', 1],
    ['./new.md', 1],
    ['docs/new.md', 1],
    ['orig.md', 1],
    ['nope.md', 0],
  ])('%s matches %i item(s)', (query, n) => {
    expect(findItems(setup().plan, query)).toHaveLength(n);
  });
});
