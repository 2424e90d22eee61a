import { afterEach, describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { buildProgram } from '../../src/cli/program.js';
import { eventually, multipartBody, send, tempDir } from './helpers.js';

// `kbsync serve --parse-time-limit / --parse-memory-limit / --parse-workers`, read back through the
// files they make fail (docs/service.md, Parse limits per file).

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

type FileRow = { id: number; status: string; error: string | null };

/** `kbsync serve` in-process on a new data folder; its URL and the first dataset's key, and how to stop it. */
async function serving(...args: string[]): Promise<{ url: string; key: string; stop: () => Promise<void> }> {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  let out = '';
  const ctx = createContext({ cwd: dir.path, env: {}, stdout: { write: (t: string) => (out += t) }, stderr: { write: () => {} } });
  const done = buildProgram(ctx).parseAsync(['node', 'kbsync', 'serve', '--port', '0', '--data', 'data', ...args]);
  const url = await eventually(async () => /^listening on (\S+)\n/.exec(out)?.[1]);
  const key = await eventually(async () => /api key: (\S+)/.exec(out)?.[1]);
  return {
    url,
    key,
    stop: async () => {
      process.emit('SIGINT');
      await done;
    },
  };
}

async function upload(url: string, key: string, name: string, content: string): Promise<number> {
  const { body, contentType } = multipartBody({ name, content });
  return (await send(`${url}/api/v1/ext/files/upload`, 'POST', { 'x-api-key': key, 'content-type': contentType }, body)).body.id as number;
}

async function rows(url: string, key: string): Promise<FileRow[]> {
  return (await send(`${url}/api/v1/ext/files/`, 'GET', { 'x-api-key': key })).body.files as FileRow[];
}

/** An XML file of 250,000 records: seconds to parse, and a tree of well over 64 MB. */
function bigXml(): string {
  const parts = ['<stock>'];
  for (let i = 0; i < 250_000; i++) parts.push(`<item><id>${i}</id><name>widget number ${i}</name><count>${i % 97}</count></item>`);
  parts.push('</stock>');
  return parts.join('\n');
}

describe('kbsync serve parse limits', () => {
  it('--parse-time-limit 1 --parse-workers 1: a long parse fails naming 1 s, and the file after it waited for the one worker', async () => {
    const s = await serving('--parse-time-limit', '1', '--parse-workers', '1');
    const slow = await upload(s.url, s.key, 'stock.xml', bigXml());
    const next = await upload(s.url, s.key, 'notes.txt', 'penguins keep their eggs warm');

    // When the small file is done, the large one is already settled: with two workers it would still be parsing.
    const seen = await eventually(async () => {
      const all = await rows(s.url, s.key);
      return all.find((f) => f.id === next)?.status === 'processed' ? all : undefined;
    }, 60_000);
    await s.stop();

    expect(seen.find((f) => f.id === slow)).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^parse_failed: parsing stopped at the time limit of 1 s per file \(kbsync serve --parse-time-limit\)/),
    });
  }, 120_000);

  it('--parse-memory-limit 64: a parse past 64 MB fails naming the limit', async () => {
    const s = await serving('--parse-memory-limit', '64');
    const hungry = await upload(s.url, s.key, 'stock.xml', bigXml());

    const row = await eventually(
      async () => (await rows(s.url, s.key)).find((f) => f.id === hungry && f.status !== 'queued' && f.status !== 'processing'),
      60_000,
    );
    await s.stop();

    expect(row).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(
        /^parse_failed: parsing stopped at the memory limit of 64 MB per file \(kbsync serve --parse-memory-limit\)/,
      ),
    });
  }, 120_000);
});
