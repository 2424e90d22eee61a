import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KBSYNC_BIN, ensureDist } from '../../helpers/build-dist.js';
import { tempDir } from '../helpers.js';

/**
 * What `kbsync serve` loads before it prints `listening on`: not the packages it needs only later
 * (undici: the first webhook delivery or LLM call; pino: the first log line; zod: the first request
 * body; busboy: the first upload) nor the Node built-ins no start needs. Each was a share of every
 * start (issue 26; the time itself is a figure of `npm run bench`).
 */

const dir = tempDir('kbsync-serve-modules-');

/**
 * A preload that appends the URL of every module loaded (import or require) to the file it is given,
 * and at the first write to stdout the Node built-ins loaded by then (as `node:NAME`).
 */
const PRELOAD = `
import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const file = process.env.KBSYNC_TEST_MODULE_LIST;
registerHooks({
  load(url, context, next) {
    if (url.startsWith('file:')) appendFileSync(file, url + '\\n');
    return next(url, context);
  },
});
const write = process.stdout.write.bind(process.stdout);
let listed = false;
process.stdout.write = (...args) => {
  if (!listed) {
    listed = true;
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => 'node:' + m.slice(13));
    appendFileSync(file, builtins.join('\\n') + '\\n');
  }
  return write(...args);
};
`;

/** Runs `kbsync serve --port 0` with the preload until its first line, then stops it; the modules loaded by then. */
async function modulesUntilListening(dataDir: string, list: string): Promise<{ firstLine: string; urls: string[] }> {
  const preload = join(dir.path, 'preload.mjs');
  writeFileSync(preload, PRELOAD);
  writeFileSync(list, '');
  const child = spawn(process.execPath, ['--import', pathToFileURL(preload).href, KBSYNC_BIN, 'serve', '--port', '0', '--data', dataDir], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir.path, KBSYNC_TEST_MODULE_LIST: list },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const firstLine = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const end = stdout.indexOf('\n');
      if (end >= 0) resolve(stdout.slice(0, end));
    });
    child.once('close', (code) => reject(new Error(`kbsync serve exited ${code} before a line: ${stderr}`)));
  });
  // Read at the first line, before anything the stop may load.
  const urls = readFileSync(list, 'utf8')
    .split('\n')
    .filter((u) => u !== '');
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  await closed;
  return { firstLine, urls };
}

beforeAll(async () => {
  await ensureDist();
}, 120_000);
afterAll(() => {
  dir.cleanup();
});

describe('kbsync serve start', () => {
  // In order: the first start makes the folder the second one finds.
  it.each([
    ['a new data folder', 'data'],
    ['an existing data folder', 'data'],
  ])('on %s loads neither undici nor pino before "listening on"', async (_label, folder) => {
    const { firstLine, urls } = await modulesUntilListening(join(dir.path, folder), join(dir.path, 'modules.txt'));
    const packages = new Set(urls.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((p) => p !== undefined));

    expect(firstLine).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    // The trace sees the loads: the service's own chunks and better-sqlite3 are in it.
    expect(urls.some((u) => u.includes('/dist/bundle/'))).toBe(true);
    expect(packages).toContain('better-sqlite3');
    for (const unwanted of ['undici', 'pino']) expect(packages, unwanted).not.toContain(unwanted);
  });

  it('on an existing data folder loads neither node:crypto, node:https, node:tls nor the undici inside Node before "listening on"', async () => {
    // The first start creates the folder, and its first dataset's key needs node:crypto.
    await modulesUntilListening(join(dir.path, 'data-builtins'), join(dir.path, 'modules-builtins-first.txt'));
    const { firstLine, urls } = await modulesUntilListening(join(dir.path, 'data-builtins'), join(dir.path, 'modules-builtins.txt'));

    expect(firstLine).toMatch(/^listening on /);
    // The list holds the built-ins: node:http is among them.
    expect(urls).toContain('node:http');
    // An ES import of node:http reads its WebSocket exports, which load Node's own copy of undici.
    for (const unwanted of ['node:crypto', 'node:https', 'node:http2', 'node:tls', 'node:internal/deps/undici/undici']) {
      expect(urls, unwanted).not.toContain(unwanted);
    }
  });

  it('loads no parser, chunker, gpt-tokenizer, zod or busboy before "listening on": the parsers load in the ingest workers, the rest with the first request', async () => {
    const { firstLine, urls } = await modulesUntilListening(join(dir.path, 'data-ingest'), join(dir.path, 'modules-ingest.txt'));
    // The bundle's files name the modules they hold ("// node_modules/gpt-tokenizer/...", "// dist/service/ingest/...").
    const held = urls
      .filter((u) => u.includes('/dist/bundle/'))
      .flatMap((u) => readFileSync(new URL(u), 'utf8').match(/^\/\/ (?:node_modules|dist)\/\S+/gm) ?? []);

    expect(firstLine).toMatch(/^listening on /);
    expect(held.some((m) => m.includes('dist/service/server.js'))).toBe(true);
    expect(held.filter((m) => /gpt-tokenizer|htmlparser2|ingest\/(?:parsers\/|chunker|token-budget|registry)/.test(m))).toEqual([]);
    expect(held.filter((m) => /node_modules\/(?:zod|@fastify\/busboy)\//.test(m))).toEqual([]);
  });
});
