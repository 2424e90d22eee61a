import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { apiFor, newAgent, useHarness } from '../../service/helpers.js';
import { FAQ_YAML } from '../../helpers/entry-files.js';

/* `kbsync explain PATH` for intelligence entries, through the CLI against the local service. */

const { harness, temp } = useHarness();

async function setup(): Promise<Workspace> {
  const api = apiFor(harness(), { plan: 'basic', credits: 1000 });
  const agent = await newAgent(api);
  const ws = createWorkspace(temp.make(), {
    baseUrl: harness().service.url,
    apiKey: api.key,
    plan: 'basic',
    config: { sources: [{ name: 'kb', path: './kb', as: 'intelligence', agent }] },
  });
  mkdirSync(join(ws.root, 'kb'), { recursive: true });
  writeFileSync(join(ws.root, 'kb', 'faq.yaml'), FAQ_YAML);
  return ws;
}

type EntryJson = { path: string; action: string; tracked?: { remoteId: string; status: string; error: string | null } };

describe('kbsync explain PATH for an intelligence entry', () => {
  it('explains the entry: the decision and why, the entry the dataset holds, its status and failure reason; an entry file lists its entries', async () => {
    const ws = await setup();
    const plan = await ws.runJson('plan');
    const paths = (plan.report as unknown as { intelligence: { items: { path: string; title: string }[] } }).intelligence.items;
    const deploy = paths.find((i) => i.title === 'When do we deploy?')?.path as string;
    expect(deploy).toMatch(/^faq\.yaml#/);

    const before = await ws.run('explain', `kb/${deploy}`);
    expect(before.stderr).toBe('');
    expect(before.code).toBe(0);
    expect(before.stdout).toContain(`kb/${deploy} (intelligence entry)\n`);
    expect(before.stdout).toMatch(/decision: +write: new entry: When do we deploy\?\n/);
    expect(before.stdout).toMatch(/credits: +1 \(intelligence entry\)\n/);
    expect(before.stdout).toMatch(/state: +the dataset holds no entry with this content/);

    expect((await ws.run('sync')).code).toBe(0);
    const after = await ws.run('explain', deploy);
    expect(after.code).toBe(0);
    const id = /decision: +skip:unchanged: unchanged: entry (\d+), pending\n/.exec(after.stdout)?.[1];
    expect(id).toBeDefined();
    expect(after.stdout).toMatch(new RegExp(`state: +entry ${id} \\(pending\\), written from this record; updated `));

    // The service's intelligence.failed event, as the daemon records it: the reason shows.
    const state = openState(ws.statePath, { lock: false });
    try {
      expect(state.setEntryStatus(id as string, 'failed', 'the embedding model refused it')).toBe(1);
    } finally {
      state.close();
    }
    const failed = await ws.run('explain', `kb/${deploy}`);
    expect(failed.stdout).toMatch(new RegExp(`state: +entry ${id} \\(failed, error: the embedding model refused it\\)`));

    const file = await ws.run('explain', '--json', 'kb/faq.yaml');
    expect(file.code).toBe(0);
    const entries = (JSON.parse(file.stdout) as { entries: EntryJson[] }).entries;
    expect(entries.map((e) => e.path)).toEqual(paths.map((p) => p.path));
    expect(entries.find((e) => e.path === deploy)?.tracked).toMatchObject({ remoteId: id, status: 'failed' });
  }, 120_000);
});
