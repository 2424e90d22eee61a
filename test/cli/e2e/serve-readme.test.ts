import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureDist } from '../../helpers/build-dist.js';
import { spawnKbsync, type ChildExit, type KbsyncChild } from '../../helpers/kbsync-child.js';

/**
 * README, "The local knowledge service": its three commands, taken from the README as written, run as
 * real child processes (`node bin/kbsync.js`) in one temp folder: a server on ./service-data, a dataset
 * created and credits added on the same folder while it runs. The server must then take the new key and
 * report the new balance (issue 15: both went to ./.kbsync/service and the key was a 401).
 */

/** The README's `npx kbsync serve ...` lines of that section, as argument lists (comments dropped). */
function readmeServeCommands(): string[][] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The local knowledge service'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line.startsWith('npx kbsync serve'))
    .map((line) => line.split(/\s+/).slice(2));
}

let root = '';
let server: KbsyncChild | undefined;

beforeAll(async () => {
  await ensureDist();
  root = mkdtempSync(join(tmpdir(), 'kbsync-serve-readme-'));
}, 180_000);

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  if (root !== '') rmSync(root, { recursive: true, force: true });
});

async function kbsync(args: string[]): Promise<ChildExit> {
  return spawnKbsync(args, root).exited;
}

/** What the running server answers to `GET /datasets/` with `apiKey`. */
async function datasetSeenBy(url: string, apiKey: string): Promise<{ status: number; dataset: Record<string, unknown> | undefined }> {
  const res = await request(`${url}/api/v1/ext/datasets/`, { headers: { 'x-api-key': apiKey } });
  const body = (await res.body.json()) as { datasets?: Record<string, unknown>[] };
  return { status: res.statusCode, dataset: body.datasets?.[0] };
}

/** Resolves with the child's stdout once `pattern` matches it (or fails when the child ends first). */
function untilPrinted(k: KbsyncChild, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match !== null) {
        k.child.stdout?.off('data', onData);
        resolve(match);
      }
    };
    k.child.stdout?.on('data', onData);
    void k.exited.then((exit) =>
      reject(new Error(`kbsync serve ended (exit ${exit.code}) before printing ${pattern}:\n${exit.stdout}\n${exit.stderr}`)),
    );
  });
}

describe('README: the local knowledge service, its three commands as written', () => {
  it('a server on --data DIR takes the key of `serve dataset create --data DIR` and reports the credits of `serve credits add --data DIR`, in either flag order', async () => {
    const commands = readmeServeCommands();
    expect(commands.map((args) => args.slice(0, 3).join(' '))).toEqual(['serve --port 8787', 'serve dataset create', 'serve credits add']);
    const [serveArgs = [], createArgs = [], addArgs = []] = commands;
    // The README's port may be taken on this machine: any free one (the only change to its commands).
    const portAt = serveArgs.indexOf('--port') + 1;
    server = spawnKbsync(
      serveArgs.map((arg, i) => (i === portAt ? '0' : arg)),
      root,
    );
    const [, url = '', firstKey = ''] = await untilPrinted(server, /^listening on (\S+)\ncreated dataset 1 .*\napi key: (\S+)\n/);

    const created = await kbsync(createArgs);
    const { datasetId, apiKey } = JSON.parse(created.stdout) as { datasetId: string; apiKey: string };
    const seenAfterCreate = await datasetSeenBy(url, apiKey);
    const added = await kbsync(addArgs);
    const seenAfterAdd = await datasetSeenBy(url, apiKey);
    // The same commands with --data before the subcommand's name.
    const createdBefore = await kbsync([
      'serve',
      '--data',
      './service-data',
      'dataset',
      'create',
      '--name',
      'more',
      '--credits',
      '10',
      '--json',
    ]);
    const other = JSON.parse(createdBefore.stdout) as { datasetId: string; apiKey: string };
    const addedBefore = await kbsync(['serve', '--data', './service-data', 'credits', 'add', '--dataset', other.datasetId, '5']);
    const seenOther = await datasetSeenBy(url, other.apiKey);
    const seenFirst = await datasetSeenBy(url, firstKey);
    server.child.kill('SIGINT');
    const stopped = await server.exited;

    expect(created).toMatchObject({ code: 0, stderr: '' });
    // The README's `credits add --dataset 2` is the dataset this creates: the first start made dataset 1.
    expect(datasetId).toBe('2');
    expect(seenAfterCreate).toEqual({
      status: 200,
      dataset: expect.objectContaining({ id: 2, name: 'docs', plan: 'pro', credits_remaining: 1000 }),
    });
    expect(added).toMatchObject({ code: 0, stdout: 'dataset 2: 1500 credits\n', stderr: '' });
    expect(seenAfterAdd.dataset).toMatchObject({ credits_remaining: 1500 });
    expect([createdBefore.code, addedBefore.code]).toEqual([0, 0]);
    expect(addedBefore.stdout).toBe(`dataset ${other.datasetId}: 15 credits\n`);
    expect(seenOther).toEqual({ status: 200, dataset: expect.objectContaining({ name: 'more', plan: 'basic', credits_remaining: 15 }) });
    expect(seenFirst.dataset).toMatchObject({ id: 1, credits_remaining: 1000 });
    // Everything went to ./service-data: no default data folder appeared.
    expect(readdirSync(root)).toEqual(['service-data']);
    expect(stopped.code).toBe(0);
  }, 60_000);
});
