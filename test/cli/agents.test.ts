import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../src/service/server.js';
import { V1, V2, apiOf, jsonOf, paidRuns, type AgentWire, type Api } from '../helpers/agents-api.js';
import { startE2eService, type E2eService } from '../helpers/e2e-service.js';
import { runCli, useTempDirs, type CliRun } from './helpers.js';

/**
 * `kbsync agents ...` and `kbsync chat NAME`, in-process, against both targets: the embedded service (the
 * default; read back by starting the local service over its data folder between commands) and a remote
 * `kbsync serve` (the local service on port 0, a dataset of its own per test). Every effect is read back
 * through the service's own HTTP API, never through kbsync's client; credits through the dataset's balance,
 * and the durable record of each paid call through the state's runs table.
 */

type Target = {
  /** Writes kbsync.yaml (and what it needs) into `dir`. */
  setup(dir: string, o?: { budgetRun?: number }): Promise<void>;
  /** Runs `fn` against the service behind the config of `dir`. */
  withApi<T>(dir: string, fn: (api: Api) => Promise<T>): Promise<T>;
};

const budgetYaml = (run = 500): string => `budget:\n  maxCreditsPerRun: ${run}\n  maxCreditsPerDay: 2000\n  maxCreditsPerMonth: 20000\n`;

const embedded: Target = {
  setup: async (dir, o = {}) => {
    writeFileSync(
      join(dir, 'kbsync.yaml'),
      `target:\n  kind: embedded\n  dataDir: .kbsync/service\nstate: .kbsync/state.db\n${budgetYaml(o.budgetRun)}sources: []\n`,
    );
    // The first command creates the embedded service's data folder, its dataset and its key (free).
    const run = await runCli(['agents', 'list'], { cwd: dir });
    if (run.code !== 0) throw new Error(`agents list failed: ${run.stderr}`);
  },
  withApi: async (dir, fn) => {
    const dataDir = join(dir, '.kbsync', 'service');
    const service = await startService({ dataDir, host: '127.0.0.1', port: 0 });
    try {
      return await fn(apiOf(service.url, readFileSync(join(dataDir, 'embedded-key'), 'utf8').trim()));
    } finally {
      await service.close();
    }
  },
};

let remoteService: E2eService | undefined;
const remoteKeys = new Map<string, string>();

const remote: Target = {
  setup: async (dir, o = {}) => {
    const service = remoteService as E2eService;
    const ds = service.dataset({ credits: 1000 });
    remoteKeys.set(dir, ds.apiKey);
    writeFileSync(join(dir, 'key'), ds.apiKey, { mode: 0o600 });
    writeFileSync(
      join(dir, 'kbsync.yaml'),
      `target:\n  kind: remote\n  baseUrl: ${service.url}\n  apiKeyFile: key\nstate: .kbsync/state.db\n${budgetYaml(o.budgetRun)}sources: []\n`,
    );
  },
  withApi: async (dir, fn) => fn(apiOf((remoteService as E2eService).url, remoteKeys.get(dir) ?? '')),
};

beforeAll(async () => {
  remoteService = await startE2eService();
});
afterAll(async () => {
  await remoteService?.close();
});

describe.each([
  ['embedded', embedded],
  ['remote', remote],
])('kbsync agents on the %s target', (_name, target) => {
  const tempDir = useTempDirs();
  const kbsync = (dir: string, ...args: string[]): Promise<CliRun> => runCli(args, { cwd: dir });

  it('agents create NAME with --system-prompt, --temperature, --top-k and --set: the service holds that config; 5 credits, recorded first', async () => {
    const dir = tempDir();
    await target.setup(dir);
    const before = await target.withApi(dir, (api) => api.balance());

    const run = await kbsync(
      dir,
      'agents',
      'create',
      'docs-helper',
      '--system-prompt',
      'Answer from the docs only.',
      '--temperature',
      '0.3',
      '--top-k',
      '4',
      '--set',
      'tone="formal"',
      '--set',
      'max_tokens=300',
      '--json',
    );

    expect(run.code, run.stderr).toBe(0);
    const out = jsonOf<{ agent: { id: string; name: string; config: unknown; datasets: unknown[] }; credits: number }>(run);
    expect(out.credits).toBe(5);
    const wanted = { system_prompt: 'Answer from the docs only.', temperature: 0.3, top_k: 4, tone: 'formal', max_tokens: 300 };
    expect(out.agent).toMatchObject({ name: 'docs-helper', config: wanted, datasets: [{ mode: 'read_only' }] });
    await target.withApi(dir, async (api) => {
      const agent = await api.get<AgentWire>(`${V1}/agents/${out.agent.id}`);
      expect(agent).toMatchObject({ name: 'docs-helper', config: wanted });
      expect(before - (await api.balance())).toBe(5);
    });
    expect(paidRuns(dir)).toEqual([['agent_create', 'done', 5]]);
  });

  it('agents create NAME --system-prompt-file FILE: the prompt is the text of FILE', async () => {
    const dir = tempDir();
    await target.setup(dir);
    writeFileSync(join(dir, 'prompt.md'), 'You answer questions about the handbook.\nCite the file.\n');

    const run = await kbsync(dir, 'agents', 'create', 'handbook', '--system-prompt-file', 'prompt.md', '--json');

    expect(run.code, run.stderr).toBe(0);
    const id = jsonOf<{ agent: { id: string } }>(run).agent.id;
    const agent = await target.withApi(dir, (api) => api.get<AgentWire>(`${V1}/agents/${id}`));
    expect(agent.config).toEqual({ system_prompt: 'You answer questions about the handbook.\nCite the file.\n' });
  });

  it('agents list --json and agents show NAME --json: what the service holds, free', async () => {
    const dir = tempDir();
    await target.setup(dir);
    await target.withApi(dir, async (api) => {
      expect((await api.send('POST', `${V1}/agents/`, { name: 'alpha', config: { top_k: 2 } })).status).toBe(201);
      expect((await api.send('POST', `${V1}/agents/`, { name: 'beta' })).status).toBe(201);
    });
    const before = await target.withApi(dir, (api) => api.balance());

    const list = await kbsync(dir, 'agents', 'list', '--json');
    const show = await kbsync(dir, 'agents', 'show', 'alpha', '--json');
    const text = await kbsync(dir, 'agents', 'list');

    expect(list.code, list.stderr).toBe(0);
    const agents = jsonOf<{ agents: { id: string; name: string; config: unknown }[] }>(list).agents;
    expect(agents.map((a) => [a.name, a.config])).toEqual([
      ['alpha', { top_k: 2 }],
      ['beta', {}],
    ]);
    expect(show.code, show.stderr).toBe(0);
    const wire = await target.withApi(dir, (api) => api.get<AgentWire>(`${V1}/agents/${agents[0]?.id ?? ''}`));
    expect(jsonOf<{ agent: unknown }>(show).agent).toMatchObject({
      id: String(wire.id),
      name: 'alpha',
      config: { top_k: 2 },
      datasets: (wire.datasets ?? []).map((d) => ({ id: String(d.id), mode: d.mode })),
    });
    expect(text.stdout).toMatch(/^ID {2}NAME {3}CREATED/m);
    expect(text.stdout).toMatch(/^ +\d+ {2}alpha {2}\S+ {2}top_k=2$/m);
    expect(await target.withApi(dir, (api) => api.balance())).toBe(before);
  });

  it('agents config NAME --temperature --top-k --set --unset, --system-prompt, --system-prompt-file: changes those keys, keeps the others; 2 credits each; a no-op is not sent', async () => {
    const dir = tempDir();
    await target.setup(dir);
    const created = await kbsync(dir, 'agents', 'create', 'helper', '--system-prompt', 'Be brief.', '--top-k', '3', '--set', 'tone=dry');
    expect(created.code, created.stderr).toBe(0);
    writeFileSync(join(dir, 'prompt.txt'), 'Quote the handbook.\n');
    const before = await target.withApi(dir, (api) => api.balance());
    const configs = (): Promise<unknown[]> =>
      target.withApi(dir, async (api) => (await api.get<{ agents: AgentWire[] }>(`${V1}/agents/`)).agents.map((a) => a.config));

    const run = await kbsync(
      dir,
      'agents',
      'config',
      'helper',
      '--temperature',
      '1.5',
      '--top-k',
      '5',
      '--set',
      'style={"lists":true}',
      '--unset',
      'tone',
      '--json',
    );
    const first = await configs();
    const prompt = await kbsync(dir, 'agents', 'config', 'helper', '--system-prompt', 'Be thorough.');
    const second = await configs();
    const fromFile = await kbsync(dir, 'agents', 'config', 'helper', '--system-prompt-file', 'prompt.txt');
    const third = await configs();
    const again = await kbsync(dir, 'agents', 'config', 'helper', '--temperature', '1.5', '--unset', 'tone', '--json');

    expect(run.code, run.stderr).toBe(0);
    const wanted = { system_prompt: 'Be brief.', top_k: 5, temperature: 1.5, style: { lists: true } };
    expect(jsonOf<{ agent: { config: unknown }; changed: boolean; credits: number }>(run)).toMatchObject({
      agent: { config: wanted },
      changed: true,
      credits: 2,
    });
    expect(first).toEqual([wanted]);
    expect(prompt.code, prompt.stderr).toBe(0);
    expect(second).toEqual([{ ...wanted, system_prompt: 'Be thorough.' }]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(third).toEqual([{ ...wanted, system_prompt: 'Quote the handbook.\n' }]);
    expect(again.code, again.stderr).toBe(0);
    expect(jsonOf<{ changed: boolean; credits: number }>(again)).toMatchObject({ changed: false, credits: 0 });
    expect(before - (await target.withApi(dir, (api) => api.balance()))).toBe(6);
    expect(paidRuns(dir)).toEqual([
      ['agent_create', 'done', 5],
      ['agent_config', 'done', 2],
      ['agent_config', 'done', 2],
      ['agent_config', 'done', 2],
    ]);
  });

  it('agents config with nothing to change, or a bad value: exit 2 before anything is sent or charged', async () => {
    const dir = tempDir();
    await target.setup(dir);
    expect((await kbsync(dir, 'agents', 'create', 'helper')).code).toBe(0);
    const before = await target.withApi(dir, (api) => api.balance());

    const nothing = await kbsync(dir, 'agents', 'config', 'helper');
    const hot = await kbsync(dir, 'agents', 'config', 'helper', '--temperature', '2.5');
    const many = await kbsync(dir, 'agents', 'config', 'helper', '--top-k', '21');

    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/nothing to change: give --system-prompt/);
    expect(hot.code).toBe(2);
    expect(hot.stderr).toContain('--temperature: a number from 0 to 2, got "2.5"');
    expect(many.code).toBe(2);
    expect(many.stderr).toContain('--top-k: a whole number from 1 to 20, got "21"');
    expect(await target.withApi(dir, (api) => api.balance())).toBe(before);
    expect(paidRuns(dir)).toEqual([['agent_create', 'done', 5]]);
  });

  it('agents datasets NAME: attach --mode self_learning, mode read_only, list --json; free', async () => {
    const dir = tempDir();
    await target.setup(dir);
    expect((await kbsync(dir, 'agents', 'create', 'writer')).code).toBe(0);
    const before = await target.withApi(dir, (api) => api.balance());

    const attach = await kbsync(dir, 'agents', 'datasets', 'writer', 'attach', '--mode', 'self_learning', '--json');
    const id = jsonOf<{ agent: { id: string } }>(attach).agent.id;
    const modeOf = (): Promise<unknown> =>
      target.withApi(dir, async (api) =>
        (await api.get<{ datasets: { mode: string }[] }>(`${V2}/agents/${id}/datasets`)).datasets.map((d) => d.mode),
      );
    const attached = await modeOf();
    const mode = await kbsync(dir, 'agents', 'datasets', 'writer', 'mode', 'read_only', '--json');
    const switched = await modeOf();
    const list = await kbsync(dir, 'agents', 'datasets', 'writer', '--json');
    const badMode = await kbsync(dir, 'agents', 'datasets', 'writer', 'attach', '--mode', 'write');

    expect(attach.code, attach.stderr).toBe(0);
    expect(jsonOf<{ dataset: unknown }>(attach).dataset).toMatchObject({ mode: 'self_learning' });
    expect(attached).toEqual(['self_learning']);
    expect(mode.code, mode.stderr).toBe(0);
    expect(jsonOf<{ dataset: unknown }>(mode).dataset).toMatchObject({ mode: 'read_only' });
    expect(switched).toEqual(['read_only']);
    expect(list.code, list.stderr).toBe(0);
    expect(jsonOf<{ agent: unknown; datasets: unknown[] }>(list)).toMatchObject({
      agent: { id, name: 'writer' },
      datasets: [{ mode: 'read_only' }],
    });
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain('--mode: read_only or self_learning, got "write"');
    expect(await target.withApi(dir, (api) => api.balance())).toBe(before);
  });

  it('an unknown name lists the agents (exit 1); a taken name is refused before paying; an ambiguous name lists the ids (exit 2)', async () => {
    const dir = tempDir();
    await target.setup(dir);
    expect((await kbsync(dir, 'agents', 'create', 'docs-helper')).code).toBe(0);
    await target.withApi(dir, async (api) => {
      // Two agents of one name, as another client may make them (the service allows it).
      expect((await api.send('POST', `${V1}/agents/`, { name: 'twin' })).status).toBe(201);
      expect((await api.send('POST', `${V1}/agents/`, { name: 'twin' })).status).toBe(201);
    });
    const before = await target.withApi(dir, (api) => api.balance());

    const unknown = await kbsync(dir, 'chat', 'doc-helper', 'hello?');
    const unknownJson = await kbsync(dir, 'agents', 'show', 'nobody', '--json');
    const taken = await kbsync(dir, 'agents', 'create', 'docs-helper');
    const ambiguous = await kbsync(dir, 'chat', 'twin', 'hello?');
    const numeric = await kbsync(dir, 'agents', 'create', '42');

    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no agent named "doc-helper"; its agents: docs-helper \(id \d+\), twin \(id \d+\), twin \(id \d+\)/);
    expect(unknownJson.code).toBe(1);
    expect(jsonOf<{ error: unknown }>(unknownJson).error).toMatchObject({ code: 'not_found', exitCode: 1 });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/an agent named "docs-helper" exists already \(id \d+\); nothing was created or charged/);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/2 agents are named "twin": id (\d+) \(created [^)]+\), id (\d+) \(created [^)]+\); give the id/);
    expect(numeric.code).toBe(2);
    expect(numeric.stderr).toMatch(/is a number, which reads as an agent id/);
    await target.withApi(dir, async (api) => {
      expect(await api.balance()).toBe(before);
      expect((await api.get<{ agents: unknown[] }>(`${V1}/agents/`)).agents).toHaveLength(3);
    });
    expect(paidRuns(dir)).toEqual([['agent_create', 'done', 5]]);
  });

  it('agents create over the budget cap: exit 3, not sent, nothing created or charged', async () => {
    const dir = tempDir();
    await target.setup(dir, { budgetRun: 4 });
    const before = await target.withApi(dir, (api) => api.balance());

    const run = await kbsync(dir, 'agents', 'create', 'too-dear');

    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/agent_create not sent: it .*maxCreditsPerRun/);
    await target.withApi(dir, async (api) => {
      expect(await api.balance()).toBe(before);
      expect((await api.get<{ agents: unknown[] }>(`${V1}/agents/`)).agents).toEqual([]);
    });
  });

  it('chat NAME: the agent of that name answers (1 credit), the same as by its id', async () => {
    const dir = tempDir();
    await target.setup(dir);
    const created = await kbsync(dir, 'agents', 'create', 'docs-helper', '--json');
    const id = jsonOf<{ agent: { id: string } }>(created).agent.id;
    const before = await target.withApi(dir, (api) => api.balance());

    const byName = await kbsync(dir, 'chat', 'docs-helper', 'anything', 'there?', '--json');
    const byId = await kbsync(dir, 'chat', id, 'anything', 'there?', '--json');

    expect(byName.code, byName.stderr).toBe(0);
    expect(jsonOf<{ agent: unknown }>(byName).agent).toEqual({ id, name: 'docs-helper' });
    expect(byId.code, byId.stderr).toBe(0);
    expect(jsonOf<{ response: string }>(byId).response).toBe(jsonOf<{ response: string }>(byName).response);
    expect(before - (await target.withApi(dir, (api) => api.balance()))).toBe(2);
    expect(paidRuns(dir).map(([command, status]) => `${command} ${status}`)).toEqual(['agent_create done', 'chat done', 'chat done']);
  });
});

describe('kbsync agents -c FILE', () => {
  const tempDir = useTempDirs();

  it('agents list, create, show, config and datasets -c FILE: work on the target and state of FILE, from another folder', async () => {
    const dir = tempDir();
    const project = join(dir, 'project');
    mkdirSync(project);
    await embedded.setup(project);
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const cfg = join('..', 'project', 'kbsync.yaml');
    const kbsync = (...args: string[]): Promise<CliRun> => runCli(args, { cwd: elsewhere });

    const created = await kbsync('agents', 'create', '-c', cfg, 'far-away', '--json');
    const listed = await kbsync('agents', 'list', '--config', cfg, '--json');
    const shown = await kbsync('agents', 'show', '-c', cfg, 'far-away', '--json');
    const configured = await kbsync('agents', 'config', '-c', cfg, 'far-away', '--top-k', '2', '--json');
    const datasets = await kbsync('agents', 'datasets', '-c', cfg, 'far-away', '--json');
    const noConfig = await kbsync('agents', 'list');

    for (const run of [created, listed, shown, configured, datasets]) expect(run.code, run.stderr).toBe(0);
    expect(jsonOf<{ agents: { name: string }[] }>(listed).agents.map((a) => a.name)).toEqual(['far-away']);
    expect(jsonOf<{ agent: { config: unknown } }>(shown).agent.config).toEqual({});
    expect(jsonOf<{ datasets: unknown[] }>(datasets).datasets).toHaveLength(1);
    const agents = await embedded.withApi(project, (api) => api.get<{ agents: AgentWire[] }>(`${V1}/agents/`));
    expect(agents.agents.map((a) => [a.name, a.config])).toEqual([['far-away', { top_k: 2 }]]);
    expect(paidRuns(project)).toEqual([
      ['agent_create', 'done', 5],
      ['agent_config', 'done', 2],
    ]);
    expect(noConfig.code).toBe(2);
    expect(existsSync(join(elsewhere, '.kbsync'))).toBe(false);
  });
});
