import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/shared/logger.js';
import { openState } from '../../src/sync/state/index.js';
import { createBurst } from '../../src/watch/burst.js';
import { createPlanAnswerer, createPlanGate } from '../../src/watch/plan-answer.js';
import { PLAN_PROTOCOL, type PlanReply } from '../../src/watch/plan-socket.js';
import { createWorkspace } from '../helpers/e2e-workspace.js';
import { useE2eSuite } from '../helpers/e2e-suite.js';

const suite = useE2eSuite();

/**
 * The daemon's plan answers in this process over a real tree, state and service: what moves with no
 * event (a row the remote poll or a cycle writes) is walked again by the next answer.
 */
async function answering() {
  const ds = suite.svc.dataset();
  const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey });
  ws.write('a/one.md', '# One\n');
  ws.write('b/two.md', '# Two\n');
  ws.write('c/three.md', '# Three\n');
  expect((await ws.run('sync', '--wait')).code).toBe(0);
  const config = loadConfig(ws.configPath, {});
  const state = openState(config.state);
  const client = createClient({ baseUrl: suite.svc.url, apiKey: ds.apiKey });
  const logger = createLogger({ level: 'silent' });
  const deps = { config, state, logger, getClient: async () => client };
  const tracked = await state.loadTrackedFilesSoon();
  const root = realpathSync(ws.docs);
  const gate = createPlanGate(createBurst({ sources: [{ name: 'docs', root, followSymlinks: false }], nowMs: Date.now }));
  const answer = createPlanAnswerer({ deps, gate, keptIndex: async () => tracked, eventsSeeAll: () => true, logger });
  const ask = async (): Promise<PlanReply & { ok: true }> => {
    const reply = await answer({ v: PLAN_PROTOCOL, op: 'plan', json: false, all: false });
    if (!reply.ok) throw new Error(reply.reason);
    return reply;
  };
  /** The answer a whole walk makes now (the burst made whole, as a watcher error makes it). */
  const askWhole = async (): Promise<PlanReply & { ok: true }> => {
    gate.changes.whole();
    gate.generation++;
    const whole = await ask();
    expect(whole.from).toBe('walk');
    return whole;
  };
  return { ws, state, tracked, gate, ask, askWhole, event: (path: string) => (gate.generation++, gate.changes.add(join(root, path))) };
}

describe("the daemon's plan answers walk what changed since their last whole walk", () => {
  it('a row written with no event (a copy the remote poll found failed) is in the next answer, as a whole walk says', async () => {
    const { state, tracked, gate, ask, askWhole } = await answering();
    try {
      const first = await ask();
      expect(first.from).toBe('walk');
      expect(first.out).toContain('3 unchanged');
      // What the remote poll does when a copy turns out failed: the state's row, then the kept index's.
      const row = state.getTracked('docs', 'b/two.md');
      if (row === null) throw new Error('b/two.md is not tracked');
      tracked.put('docs', 'b/two.md', { ...row, remoteStatus: 'failed' });
      gate.generation++;
      const next = await ask();
      expect(next.from).toBe('scope');
      expect(next.out).toMatch(/reprocess\s+\d+\s+b\/two\.md/);
      // The same plan a whole walk makes.
      expect(next.out).toBe((await askWhole()).out);
    } finally {
      state.close();
    }
  });

  it("an event names a folder: only it is walked, the counts of the rest are the last walk's", async () => {
    const { ws, state, ask, askWhole, event } = await answering();
    try {
      await ask();
      ws.write('a/one.md', '# One, edited\n');
      ws.write('a/new.md', '# New\n');
      event('a/one.md');
      event('a/new.md');
      const scoped = await ask();
      expect(scoped.from).toBe('scope');
      expect(scoped.out).toMatch(/upload\s+5\s+a\/new\.md/);
      expect(scoped.out).toMatch(/upload\s+5\s+a\/one\.md/);
      expect(scoped.out).toContain('2 unchanged');
      expect(scoped.out).toBe((await askWhole()).out);
    } finally {
      state.close();
    }
  });
});
