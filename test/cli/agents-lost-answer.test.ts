import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { V1, apiOf, jsonOf, paidRuns, type AgentWire, type Api } from '../helpers/agents-api.js';
import { startE2eService, type E2eService } from '../helpers/e2e-service.js';
import { startFaultProxy, type FaultHooks, type FaultProxy, type ProxiedRequest } from '../helpers/fault-proxy.js';
import { runCli, useTempDirs } from './helpers.js';

/**
 * `kbsync agents create` and `config` are paid calls: when the answer is lost, kbsync looks at the service
 * (free calls) before saying anything, so that it neither reports a failure for work that was done and
 * charged, nor lets a second run pay for it again. The local service on port 0 behind the fault proxy,
 * which drops a request before it arrives or an answer after the service committed it.
 */

let remoteService: E2eService | undefined;
beforeAll(async () => {
  remoteService = await startE2eService();
});
afterAll(async () => {
  await remoteService?.close();
});

describe('a paid agents call whose answer is lost (remote target behind a fault proxy)', () => {
  const tempDir = useTempDirs();
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  /** A remote config on a new dataset, through a proxy that applies `hooks`; and the dataset's API (not proxied). */
  async function behindProxy(dir: string, hooks: FaultHooks): Promise<Api> {
    const service = remoteService as E2eService;
    const ds = service.dataset({ credits: 1000 });
    proxy = await startFaultProxy(service.url, hooks);
    writeFileSync(join(dir, 'key'), ds.apiKey, { mode: 0o600 });
    writeFileSync(
      join(dir, 'kbsync.yaml'),
      `target:\n  kind: remote\n  baseUrl: ${proxy.url}\n  apiKeyFile: key\nstate: .kbsync/state.db\n`,
    );
    return apiOf(service.url, ds.apiKey);
  }
  const isCreate = (req: ProxiedRequest): boolean => req.method === 'POST' && /\/agents\/?$/.test(req.url.split('?')[0] ?? '');
  const isConfig = (req: ProxiedRequest): boolean => req.method === 'PUT' && /\/agents\/\d+\/config$/.test(req.url.split('?')[0] ?? '');

  it('agents create: the agent was made, the listing shows it, so it is recorded done and charged once', async () => {
    const dir = tempDir();
    const api = await behindProxy(dir, { onResponse: (req) => (isCreate(req) ? 'drop' : 'relay') });
    const before = await api.balance();

    const run = await runCli(['agents', 'create', 'lost-answer', '--json'], { cwd: dir });
    const again = await runCli(['agents', 'create', 'lost-answer'], { cwd: dir });

    expect(run.code, run.stderr).toBe(0);
    expect(jsonOf<{ agent: { name: string } }>(run).agent.name).toBe('lost-answer');
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/an agent named "lost-answer" exists already/);
    expect((await api.get<{ agents: AgentWire[] }>(`${V1}/agents/`)).agents.map((a) => a.name)).toEqual(['lost-answer']);
    expect(before - (await api.balance())).toBe(5);
    expect(paidRuns(dir)).toEqual([['agent_create', 'done', 5]]);
    expect(proxy?.requests.filter(isCreate)).toHaveLength(1);
  });

  it('agents create: the request never arrived, nothing is listed: the outcome stays unknown (exit 1) and running again creates it once', async () => {
    const dir = tempDir();
    let drop = true;
    const api = await behindProxy(dir, { onRequest: (req) => (isCreate(req) && drop ? { kind: 'drop' } : { kind: 'forward' }) });
    const before = await api.balance();

    const lost = await runCli(['agents', 'create', 'never-sent'], { cwd: dir });
    drop = false;
    const again = await runCli(['agents', 'create', 'never-sent'], { cwd: dir });

    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/agents\/: no answer, outcome unknown/);
    expect(again.code, again.stderr).toBe(0);
    expect((await api.get<{ agents: AgentWire[] }>(`${V1}/agents/`)).agents.map((a) => a.name)).toEqual(['never-sent']);
    expect(before - (await api.balance())).toBe(5);
    expect(paidRuns(dir)).toEqual([
      ['agent_create', 'failed', null],
      ['agent_create', 'done', 5],
    ]);
  });

  it('agents config: the new config is on the service, so the lost answer is recorded done, 2 credits', async () => {
    const dir = tempDir();
    const api = await behindProxy(dir, { onResponse: (req) => (isConfig(req) ? 'drop' : 'relay') });
    expect((await runCli(['agents', 'create', 'tuned'], { cwd: dir })).code).toBe(0);
    const before = await api.balance();

    const run = await runCli(['agents', 'config', 'tuned', '--temperature', '0.7', '--json'], { cwd: dir });

    expect(run.code, run.stderr).toBe(0);
    expect(jsonOf<{ agent: { config: unknown } }>(run).agent.config).toEqual({ temperature: 0.7 });
    expect(before - (await api.balance())).toBe(2);
    expect(paidRuns(dir)).toEqual([
      ['agent_create', 'done', 5],
      ['agent_config', 'done', 2],
    ]);
  });
});
