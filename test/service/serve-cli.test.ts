import { CommanderError } from 'commander';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/commands/serve.js';
import { createContext, type CliContext } from '../../src/cli/context.js';
import { reportError } from '../../src/cli/exit.js';
import { buildProgram } from '../../src/cli/program.js';
import { listenFailure, parseLlmUrl, parseMaxFileMb } from '../../src/cli/serve-options.js';
import { KbsyncError } from '../../src/shared/errors.js';
import { eventually, multipartBody, send, tempDir } from './helpers.js';

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
    // The folder given with --data after the subcommand holds them, not the default one.
    expect(existsSync(join(dir.path, 'd', 'service.db'))).toBe(true);
    expect(existsSync(join(dir.path, '.kbsync'))).toBe(false);
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

/** Starts `kbsync serve ...args` and resolves once it listens, with its URL and first dataset's key. */
async function serving(cwd: string, ...args: string[]): Promise<{ run: Run; url: string; key: string }> {
  const run = kbsync(cwd, 'serve', '--port', '0', '--data', 'data', ...args);
  const url = await eventually(async () => /^listening on (\S+)\n/.exec(run.out())?.[1]);
  const key = await eventually(async () => /api key: (\S+)/.exec(run.out())?.[1]);
  return { run, url, key };
}

/** Uploads `bytes` bytes as one file with the first dataset's key. */
async function uploadBytes(url: string, key: string, bytes: number): Promise<number> {
  const { body, contentType } = multipartBody({ name: 'big.txt', content: Buffer.alloc(bytes, 'a') });
  return (await send(`${url}/api/v1/ext/files/upload`, 'POST', { 'x-api-key': key, 'content-type': contentType }, body)).status;
}

describe('kbsync serve: start-up problems are usage errors (exit 2), not bugs', () => {
  it('a busy --port exits 2 with "port N is in use; pick another with --port"', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;

    try {
      const run = kbsync(dir.path, 'serve', '--port', String(port), '--data', 'data');

      expect(await run.done).toBe(2);
      expect(run.err()).toContain(`kbsync: port ${port} is in use; pick another with --port\n`);
      expect(run.err()).not.toContain('bug');
      expect(run.out()).toBe('');
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it.each([
    ['EADDRINUSE', 'port 8787 is in use; pick another with --port'],
    ['EACCES', 'no permission to listen on port 8787 (ports below 1024 need privileges); pick another with --port'],
    ['EADDRNOTAVAIL', 'cannot listen on 10.9.8.7: not an address of this machine; pick another with --host'],
  ])('listen error %s becomes a usage error', (code, message) => {
    const err = Object.assign(new Error(`listen ${code}`), { code, syscall: 'listen' });

    const mapped = listenFailure(err, '10.9.8.7', 8787);

    expect(mapped).toBeInstanceOf(KbsyncError);
    expect(mapped).toMatchObject({ code: 'usage', message, cause: err });
  });

  it('other errors pass through unchanged', () => {
    const err = Object.assign(new Error('disk'), { code: 'ENOSPC' });

    expect(listenFailure(err, '127.0.0.1', 8787)).toBe(err);
  });

  it.each([
    ['not-a-url', 'not a URL'],
    ['ftp://127.0.0.1/v1', 'got "ftp:"'],
    ['localhost:11434', 'got "localhost:"'],
  ])('--llm-url %s exits 2 before starting, with a clear message', async (value, detail) => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const run = kbsync(dir.path, 'serve', '--port', '0', '--data', 'data', '--llm-url', value);

    expect(await run.done).toBe(2);
    expect(run.err()).toContain('--llm-url: an http:// or https:// URL of an OpenAI-compatible server');
    expect(run.err()).toContain(detail);
    expect(run.out()).toBe('');
  });

  it.each(['http://127.0.0.1:11434/v1', 'https://llm.example.com/v1/chat/completions'])('--llm-url %s is accepted', (value) => {
    expect(parseLlmUrl(value)).toBe(value);
  });
});

describe('kbsync serve --max-file-mb plan=N[,plan=N]', () => {
  it('parses a list and repeated flags into bytes per plan', () => {
    const first = parseMaxFileMb('team=1000,enterprise=2000');

    expect(first).toEqual({ team: 1000 * 1_048_576, enterprise: 2000 * 1_048_576 });
    expect(parseMaxFileMb(' basic = 2 ', first)).toEqual({ ...first, basic: 2 * 1_048_576 });
  });

  it.each([
    ['gold=5', 'unknown plan "gold"'],
    ['basic=0', 'a whole number of MB from 1'],
    ['basic=1.5', 'a whole number of MB from 1'],
    ['basic=x', 'a whole number of MB from 1'],
    ['basic', 'plan=N'],
    ['basic=1,basic=2', 'basic given twice'],
    ['', 'plan=N'],
  ])('"%s" exits 2 (%s)', async (value, detail) => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const run = kbsync(dir.path, 'serve', '--port', '0', '--data', 'data', '--max-file-mb', value);

    expect(await run.done).toBe(2);
    expect(run.err()).toContain('--max-file-mb');
    expect(run.err()).toContain(detail);
    expect(run.out()).toBe('');
  });

  it('serves with the given limit: basic=1 takes 1 MiB and refuses 1 MiB + 1 byte with 413', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const { run, url, key } = await serving(dir.path, '--max-file-mb', 'basic=1');
    const atLimit = await uploadBytes(url, key, 1_048_576);
    const over = await uploadBytes(url, key, 1_048_577);
    process.emit('SIGINT');

    expect(await run.done).toBe(0);
    expect(atLimit).toBe(201);
    expect(over).toBe(413);
  });
});
