import { CommanderError } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/commands/serve.js';
import { createContext, type CliContext } from '../../src/cli/context.js';
import { reportError } from '../../src/cli/exit.js';
import { buildProgram } from '../../src/cli/program.js';
import { eventually, send, tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

type Run = { out: () => string; err: () => string; done: Promise<number> };

/** Runs `kbsync ...args` in-process like main() does (with `serve` registered even before commands/index.ts lists it). */
function kbsync(cwd: string, ...args: string[]): Run {
  let out = '';
  let err = '';
  const ctx: CliContext = createContext({
    cwd,
    env: {},
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
  });
  const program = buildProgram(ctx);
  if (!program.commands.some((c) => c.name() === 'serve')) register(program, ctx);
  const done = program.parseAsync(['node', 'kbsync', ...args]).then(
    () => ctx.exitCode as number,
    (e: unknown) => (e instanceof CommanderError ? (e.exitCode === 0 ? 0 : 2) : reportError(e, ctx, { json: false })),
  );
  return { out: () => out, err: () => err, done };
}

describe('kbsync serve', () => {
  it('prints "listening on", creates the first dataset and key once, serves, and stops on SIGINT', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const run = kbsync(dir.path, 'serve', '--port', '0', '--data', 'data');
    const firstLine = await eventually(async () => run.out().split('\n')[0]?.startsWith('listening on ') ? run.out().split('\n')[0] : undefined);
    const url = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(firstLine ?? '');
    const key = /api key: (\S+)/.exec(run.out())?.[1] ?? '';
    const info = await send(`${url?.[1]}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': key });
    process.emit('SIGINT');
    const code = await run.done;
    const again = kbsync(dir.path, 'serve', '--port', '0', '--data', 'data');
    await eventually(async () => (again.out().startsWith('listening on ') ? true : undefined));
    process.emit('SIGTERM');

    expect(url).not.toBeNull();
    expect(Number(url?.[2])).toBeGreaterThan(0);
    expect(info.body.datasets[0]).toMatchObject({ plan: 'basic', credits_remaining: 1000 });
    expect(code).toBe(0);
    expect(await again.done).toBe(0);
    expect(again.out()).not.toContain('api key');
  });

  it('dataset create --json and credits add work on the data folder without a server', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const create = kbsync(dir.path, 'serve', 'dataset', 'create', '--data', 'd', '--name', 'Team docs', '--plan', 'pro', '--credits', '50', '--json');
    expect(await create.done).toBe(0);
    const created = JSON.parse(create.out()) as { datasetId: string; apiKey: string };
    const add = kbsync(dir.path, 'serve', 'credits', 'add', '--data', 'd', '--dataset', created.datasetId, '25');
    expect(await add.done).toBe(0);
    const unknown = kbsync(dir.path, 'serve', 'credits', 'add', '--data', 'd', '--dataset', '999', '5');
    const badPlan = kbsync(dir.path, 'serve', 'dataset', 'create', '--data', 'd', '--name', 'x', '--plan', 'gold');

    expect(created).toEqual({ datasetId: expect.stringMatching(/^\d+$/), apiKey: expect.stringMatching(/^kbs_/) });
    expect(add.out()).toBe(`dataset ${created.datasetId}: 75 credits\n`);
    expect(await unknown.done).toBe(2);
    expect(unknown.err()).toContain('dataset not found');
    expect(await badPlan.done).toBe(2);
  });

  it('rejects a bad --rate-limit and --port with exit 2', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const rate = kbsync(dir.path, 'serve', '--port', '0', '--rate-limit', 'fast');
    const port = kbsync(dir.path, 'serve', '--port', '70000');

    expect(await rate.done).toBe(2);
    expect(rate.err()).toContain('--rate-limit');
    expect(await port.done).toBe(2);
  });
});
