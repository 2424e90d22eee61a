import { availableParallelism } from 'node:os';
import { beforeEach, describe, expect, it } from 'vitest';
import { WALK_AHEAD_MIN_STATE_BYTES, type PreparedPlan } from '../../../src/sync/executor/prepare.js';
import { preparedPlanOf } from '../../helpers/prepare-plan.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';

const suite = useE2eSuite();

let ws: Workspace;
/** A workspace synced once: many folders of small files, and one folder its .gitignore leaves out. */
beforeEach(async () => {
  const ds = suite.svc.dataset({ credits: 100_000 });
  ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
  ws.write('.gitignore', 'build/\n');
  for (let i = 0; i < 60; i++) ws.write(`area-${i % 6}/part-${i % 5}/doc-${i}.md`, `# doc ${i}\n`);
  ws.write('build/out.md', 'left out');
  expect((await ws.run('sync')).code).toBe(0);
  ws.write('area-0/new.md', 'new since the sync');
});

/** A full plan (every file planned) on the workspace's state, padded to `padBytes` first. */
const plan = (padBytes = 0): Promise<PreparedPlan> => preparedPlanOf(ws.configPath, { padBytes });

describe('preparePlan and the helper walking ahead', () => {
  it('starts one for a large state, and plans exactly what it plans without one', async () => {
    const small = await plan();
    const large = await plan(WALK_AHEAD_MIN_STATE_BYTES);

    expect(small.walkAhead).toBeNull();
    // With one core no helper starts (it would only take turns with the walk).
    if (availableParallelism() < 2) expect(large.walkAhead).toBeNull();
    else expect(large.walkAhead?.listings).toBeGreaterThan(30);
    expect({ ...large.plan, plannedAt: '' }).toEqual({ ...small.plan, plannedAt: '' });
    expect(large.plan.items.filter((i) => i.action === 'upload').map((i) => i.path)).toEqual(['area-0/new.md']);
    expect(large.plan.items.find((i) => i.path === 'build')?.action).toBe('skip:ignored');
  });
});
