import { CommanderError } from 'commander';
import { existsSync, readdirSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/commands/serve.js';
import { createContext, type CliContext } from '../../src/cli/context.js';
import { reportError } from '../../src/cli/exit.js';
import { buildProgram } from '../../src/cli/program.js';
import { listenFailure, parseLlmUrl, parseMaxFileMb } from '../../src/cli/serve-options.js';
import { startService } from '../../src/service/server.js';
import { KbsyncError } from '../../src/shared/errors.js';
import { eventually, multipartBody, send, tempDir, type Reply } from './helpers.js';

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
    const firstLine = await eventually(async () =>
      run.out().split('\n')[0]?.startsWith('listening on ') ? run.out().split('\n')[0] : undefined,
    );
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

    const create = kbsync(
      dir.path,
      'serve',
      'dataset',
      'create',
      '--data',
      'd',
      '--name',
      'Team docs',
      '--plan',
      'pro',
      '--credits',
      '50',
      '--json',
    );
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
    // --data d: the dataset lives in ./d, and nothing went to the default folder.
    expect(readdirSync(dir.path)).toEqual(['d']);
    expect(await datasetOn(join(dir.path, 'd'), created.apiKey)).toMatchObject({ name: 'Team docs', plan: 'pro', credits_remaining: 75 });
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

/** Starts `kbsync serve ...args` on ./data and resolves once it listens, with its URL and the first dataset's key. */
async function serving(cwd: string, ...args: string[]): Promise<{ run: Run; url: string; key: string }> {
  const run = kbsync(cwd, 'serve', '--port', '0', '--data', 'data', ...args);
  const url = await eventually(async () => /^listening on (\S+)\n/.exec(run.out())?.[1]);
  // Printed with "listening on" on a first start only (an empty data folder); '' on a restart.
  const key = /api key: (\S+)/.exec(run.out())?.[1] ?? '';
  return { run, url, key };
}

/** The dataset of `apiKey` as `GET /datasets/` reports it, from a service started on `dataDir` (undefined: 401). */
async function datasetOn(dataDir: string, apiKey: string): Promise<Record<string, unknown> | undefined> {
  const service = await startService({ dataDir, host: '127.0.0.1', port: 0 });
  try {
    const res = await send(`${service.url}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': apiKey });
    return res.status === 200 ? (res.body.datasets[0] as Record<string, unknown>) : undefined;
  } finally {
    await service.close();
  }
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

describe("kbsync serve dataset create / credits add: --data is the folder the README's server runs on (issue 15)", () => {
  const createArgs = ['--name', 'docs', '--plan', 'pro', '--credits', '1200', '--json'];

  it.each([
    ['after the subcommand', ['serve', 'dataset', 'create', '--data', 'service-data', ...createArgs]],
    ['before the subcommand', ['serve', '--data', 'service-data', 'dataset', 'create', ...createArgs]],
  ])(
    'dataset create with --data %s writes into that folder; a server on it takes the key with the name, plan and credits asked',
    async (_where, args) => {
      const dir = tempDir();
      cleanups.push(dir.cleanup);

      const run = kbsync(dir.path, ...args);
      const code = await run.done;
      const created = JSON.parse(run.out()) as { datasetId: string; apiKey: string };

      expect(code).toBe(0);
      expect(readdirSync(dir.path)).toEqual(['service-data']);
      expect(existsSync(join(dir.path, 'service-data', 'service.db'))).toBe(true);
      expect(await datasetOn(join(dir.path, 'service-data'), created.apiKey)).toMatchObject({
        id: Number(created.datasetId),
        name: 'docs',
        plan: 'pro',
        credits_remaining: 1200,
      });
    },
  );

  it.each([
    ['after the subcommand', (id: string) => ['serve', 'credits', 'add', '--data', 'service-data', '--dataset', id, '500', '--json']],
    ['before the subcommand', (id: string) => ['serve', '--data', 'service-data', 'credits', 'add', '--dataset', id, '500', '--json']],
  ])('credits add with --data %s adds to the named dataset of that folder, and to no other', async (_where, args) => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const first = JSON.parse(
      (await finished(kbsync(dir.path, 'serve', 'dataset', 'create', '--data', 'service-data', '--name', 'a', '--credits', '10', '--json')))
        .out,
    ) as { datasetId: string; apiKey: string };
    const second = JSON.parse(
      (await finished(kbsync(dir.path, 'serve', 'dataset', 'create', '--data', 'service-data', '--name', 'b', '--credits', '20', '--json')))
        .out,
    ) as { datasetId: string; apiKey: string };

    const add = await finished(kbsync(dir.path, ...args(second.datasetId)));

    expect(add.code).toBe(0);
    expect(JSON.parse(add.out)).toEqual({ datasetId: second.datasetId, credits: 520 });
    expect(readdirSync(dir.path)).toEqual(['service-data']);
    expect(await datasetOn(join(dir.path, 'service-data'), second.apiKey)).toMatchObject({ credits_remaining: 520 });
    expect(await datasetOn(join(dir.path, 'service-data'), first.apiKey)).toMatchObject({ credits_remaining: 10 });
  });

  it("without --data anywhere, both use the default folder .kbsync/service (the embedded target's)", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const create = await finished(kbsync(dir.path, 'serve', 'dataset', 'create', '--name', 'x', '--json'));
    const { datasetId, apiKey } = JSON.parse(create.out) as { datasetId: string; apiKey: string };
    const add = await finished(kbsync(dir.path, 'serve', 'credits', 'add', '--dataset', datasetId, '1'));

    expect([create.code, add.code]).toEqual([0, 0]);
    expect(readdirSync(dir.path)).toEqual(['.kbsync']);
    expect(await datasetOn(join(dir.path, '.kbsync', 'service'), apiKey)).toMatchObject({ plan: 'basic', credits_remaining: 1001 });
  });

  it('text output (no --json) names the dataset, plan and credits, and the key once', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const create = await finished(
      kbsync(dir.path, 'serve', 'dataset', 'create', '--data', 'd', '--name', 'docs', '--plan', 'team', '--credits', '7'),
    );
    const add = await finished(kbsync(dir.path, 'serve', 'credits', 'add', '--data', 'd', '--dataset', '1', '3'));

    expect(create.out).toMatch(/^created dataset 1 "docs" \(plan team, 7 credits\)\napi key: kbs_\S+\n$/);
    expect(add.out).toBe('dataset 1: 10 credits\n');
  });

  const create = ['dataset', 'create', '--name', 'x'];
  const add = ['credits', 'add', '--dataset', '1', '5'];
  const notFor = (option: string, sub: string): string => `${option} applies to "kbsync serve" itself, not to "kbsync serve ${sub}"`;
  it.each([
    [['serve', '--data', 'a', 'dataset', 'create', '--data', 'b', '--name', 'x'], '--data given twice ("a", "b"): give one data folder'],
    [
      ['serve', '--data', 'a', 'credits', 'add', '--dataset', '1', '5', '--data', 'b'],
      '--data given twice ("a", "b"): give one data folder',
    ],
    // serve's options before the subcommand's name, and after it: serve takes them either way.
    [['serve', '--host', '0.0.0.0', ...create], notFor('--host', 'dataset create')],
    [['serve', ...create, '--port', '9999'], notFor('--port', 'dataset create')],
    [['serve', ...create, '--allow-insecure-webhooks'], notFor('--allow-insecure-webhooks', 'dataset create')],
    [['serve', '--rate-limit', '5', ...create], notFor('--rate-limit', 'dataset create')],
    [['serve', ...create, '--llm-url', 'http://127.0.0.1:1/v1'], notFor('--llm-url', 'dataset create')],
    [['serve', ...create, '--max-file-mb', 'basic=1'], notFor('--max-file-mb', 'dataset create')],
    [['serve', ...add, '--host', '0.0.0.0'], notFor('--host', 'credits add')],
    [['serve', '--port', '9999', ...add], notFor('--port', 'credits add')],
    [['serve', '--allow-insecure-webhooks', ...add], notFor('--allow-insecure-webhooks', 'credits add')],
    [['serve', ...add, '--rate-limit', '5'], notFor('--rate-limit', 'credits add')],
    [['serve', '--llm-url', 'http://127.0.0.1:1/v1', ...add], notFor('--llm-url', 'credits add')],
    [['serve', ...add, '--max-file-mb', 'basic=1'], notFor('--max-file-mb', 'credits add')],
    [['serve', '--parse-time-limit', '9', ...create], notFor('--parse-time-limit', 'dataset create')],
    [['serve', ...create, '--parse-memory-limit', '256'], notFor('--parse-memory-limit', 'dataset create')],
    [['serve', ...create, '--parse-workers', '1'], notFor('--parse-workers', 'dataset create')],
    [['serve', ...add, '--parse-time-limit', '9'], notFor('--parse-time-limit', 'credits add')],
    [['serve', '--parse-memory-limit', '256', ...add], notFor('--parse-memory-limit', 'credits add')],
    [['serve', ...add, '--parse-workers', '1'], notFor('--parse-workers', 'credits add')],
    // -c names a sync config; no serve command reads one.
    [['serve', '--port', '0', '-c', 'kbsync.yaml'], '-c/--config: "kbsync serve" reads no config file; its data folder is --data DIR'],
    [['serve', ...create, '-c', 'kbsync.yaml'], '-c/--config: "kbsync serve dataset create" reads no config file'],
    [['-c', 'kbsync.yaml', 'serve', ...add], '-c/--config: "kbsync serve credits add" reads no config file'],
  ])('%j: an option the command would ignore is refused (exit 2), and nothing is written', async (args, message) => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const run = await finished(kbsync(dir.path, ...args));

    expect(run.code).toBe(2);
    expect(run.err).toContain(message);
    expect(run.out).toBe('');
    expect(readdirSync(dir.path)).toEqual([]);
  });
});

describe('kbsync serve: each option changes what the server does', () => {
  it('--data DIR: the first start creates DIR/service.db (and nothing in the default folder)', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const { run, key } = await serving(dir.path);
    process.emit('SIGINT');

    expect(await run.done).toBe(0);
    expect(readdirSync(dir.path)).toEqual(['data']);
    expect(await datasetOn(join(dir.path, 'data'), key)).toMatchObject({ plan: 'basic', credits_remaining: 1000 });
  });

  it('--port N listens on N', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const port = await freePort();

    const run = kbsync(dir.path, 'serve', '--port', String(port), '--data', 'data');
    const url = await eventually(async () => /^listening on (\S+)\n/.exec(run.out())?.[1]);
    const key = await eventually(async () => /api key: (\S+)/.exec(run.out())?.[1]);
    const res = await send(`http://127.0.0.1:${port}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': key });
    process.emit('SIGINT');

    expect(await run.done).toBe(0);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect(res.status).toBe(200);
  });

  it('--host 127.0.0.2 listens there, and not on the default 127.0.0.1', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const { run, url, key } = await serving(dir.path, '--host', '127.0.0.2');
    const port = new URL(url).port;
    const there = await send(`http://127.0.0.2:${port}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': key });
    const notThere = await send(`http://127.0.0.1:${port}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': key }).catch(
      (err: unknown) => err as { code?: string },
    );
    process.emit('SIGINT');

    expect(await run.done).toBe(0);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    expect(there.status).toBe(200);
    expect(notThere).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('--allow-insecure-webhooks: an http://127.0.0.1 webhook URL is accepted with it, refused (422) without it', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const register = (url: string, key: string): Promise<Reply> =>
      send(
        `${url}/api/v2/ext/webhooks`,
        'POST',
        { 'x-api-key': key, 'content-type': 'application/json' },
        JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
      );

    const strict = await serving(dir.path);
    const refused = await register(strict.url, strict.key);
    process.emit('SIGINT');
    expect(await strict.run.done).toBe(0);
    const lenient = await serving(dir.path, '--allow-insecure-webhooks');
    const accepted = await register(lenient.url, strict.key);
    process.emit('SIGINT');

    expect(await lenient.run.done).toBe(0);
    expect(refused.status).toBe(422);
    expect(accepted.status).toBe(201);
  });

  it('--rate-limit 2/min: the third request of a key within the minute is answered 429 with Retry-After', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);

    const { run, url, key } = await serving(dir.path, '--rate-limit', '2/min');
    const statuses: Reply[] = [];
    for (let i = 0; i < 3; i++) statuses.push(await send(`${url}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': key }));
    process.emit('SIGINT');

    expect(await run.done).toBe(0);
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(statuses[2]?.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('--llm-url URL: agent chat answers come from that OpenAI-compatible server', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const asked: string[] = [];
    const llm = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        asked.push(`${req.method} ${req.url} ${body}`);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ choices: [{ message: { content: 'answer from the model' } }] }));
      });
    });
    await new Promise<void>((resolve) => llm.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => llm.close());

    const { run, url, key } = await serving(dir.path, '--llm-url', `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`);
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const agent = await send(`${url}/api/v1/ext/agents/`, 'POST', headers, JSON.stringify({ name: 'helper' }));
    const chat = await send(
      `${url}/api/v1/ext/agents/${agent.body.id}/chat`,
      'POST',
      headers,
      JSON.stringify({ message: 'what is in the dataset?' }),
    );
    process.emit('SIGINT');

    expect(await run.done).toBe(0);
    expect(chat.status).toBe(200);
    expect(chat.body.response).toBe('answer from the model');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^POST \/v1\/chat\/completions .*what is in the dataset\?/);
  });
});

/** Waits for a run's end: its exit code and all it printed. */
async function finished(run: Run): Promise<{ code: number; out: string; err: string }> {
  const code = await run.done;
  return { code, out: run.out(), err: run.err() };
}

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
