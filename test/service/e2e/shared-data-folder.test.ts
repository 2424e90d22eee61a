import { existsSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { logsOf, until, useChildren } from '../../helpers/daemon-children.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { multipartBody, send } from '../helpers.js';

/*
 * Two services on one data folder, as the embedded target makes them: a daemon's and a command's,
 * each a real `kbsync serve` process here. The second one's start must leave alone what the first is
 * doing: an upload streaming into its temp file, the idempotency key that upload holds, a file its
 * worker is indexing.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 300_000);
const children = useChildren();

type Serving = { k: KbsyncChild; url: string; key: string };

/** `kbsync serve` on `data` (port 0); the first start on a folder prints the key of the dataset it made. */
async function serve(root: string, key?: string): Promise<Serving> {
  const k = spawnKbsync(['serve', '--port', '0', '--data', 'data'], root);
  children.push(k);
  let out = '';
  k.child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await until('listening', () => /^listening on /m.test(out), 60_000);
  const url = /^listening on (\S+)/m.exec(out)?.[1] ?? '';
  return { k, url, key: key ?? /api key: (\S+)/.exec(out)?.[1] ?? '' };
}

function db(root: string): Database.Database {
  return new Database(join(root, 'data', 'service.db'), { readonly: true, fileMustExist: true });
}

const balance = async (s: Serving): Promise<number> =>
  (await send(`${s.url}/api/v1/ext/datasets/`, 'GET', { 'x-api-key': s.key })).body.datasets[0].credits_remaining as number;

describe('a second service started on the data folder of a running one', () => {
  it('an upload streaming into the first finishes (its temp file stays), and its idempotency key replays on the second', async () => {
    const root = temp.make();
    const first = await serve(root);
    const { body, contentType } = multipartBody({ name: 'notes.md', content: `# Notes\n\n${'A line of the notes.\n'.repeat(4000)}` });
    const half = Math.floor(body.length / 2);
    let secondStarted = (): void => {};
    const started = new Promise<void>((resolve) => (secondStarted = resolve));
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${first.url}/api/v1/ext/files/upload`, {
        method: 'POST',
        headers: { 'x-api-key': first.key, 'content-type': contentType, 'content-length': body.length, 'idempotency-key': 'upload-1' },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.subarray(0, half));
      // The rest once the second service has started (below).
      void started.then(() => req.end(body.subarray(half)));
    });
    const tmp = join(root, 'data', 'files', 'tmp');
    const streaming = (dir: string): boolean =>
      existsSync(dir) && readdirSync(dir, { withFileTypes: true }).some((e) => (e.isDirectory() ? streaming(join(dir, e.name)) : true));
    await until('the upload streaming into a temp file', () => streaming(tmp));
    const second = await serve(root, first.key);
    secondStarted();
    const uploaded = await answer;
    const before = await balance(second);
    const again = await send(
      `${second.url}/api/v1/ext/files/upload`,
      'POST',
      {
        'x-api-key': first.key,
        'content-type': contentType,
        'idempotency-key': 'upload-1',
      },
      body,
    );

    expect(uploaded.status, uploaded.text).toBe(201);
    expect(again.status, again.text).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await balance(second)).toBe(before);
    const rows = db(root);
    try {
      expect(rows.prepare('SELECT count(*) AS n FROM files').get()).toEqual({ n: 1 });
    } finally {
      rows.close();
    }
  }, 120_000);

  it('a file the first is indexing is indexed once, by it, with all its chunks', async () => {
    const root = temp.make();
    const first = await serve(root);
    // Many chunks: the first service writes them in batches, a staging generation until the last.
    const lines = Array.from({ length: 60_000 }, (_, i) => `Line ${i} of the long handbook, about topic ${i % 97} and section ${i % 13}.`);
    const { body, contentType } = multipartBody({ name: 'handbook.md', content: `# Handbook\n\n${lines.join('\n')}\n` });
    const up = await send(`${first.url}/api/v1/ext/files/upload`, 'POST', { 'x-api-key': first.key, 'content-type': contentType }, body);
    expect(up.status, up.text).toBe(201);
    const staging = (): boolean => {
      const d = db(root);
      try {
        return d.prepare(`SELECT 1 FROM chunk_generations WHERE state = 'staging'`).get() !== undefined;
      } finally {
        d.close();
      }
    };
    await until('the first service writing the chunks', staging, 60_000);
    const second = await serve(root, first.key);
    const processed = async (): Promise<boolean> =>
      (await send(`${second.url}/api/v1/ext/files/`, 'GET', { 'x-api-key': first.key })).body.files[0]?.status === 'processed';
    await until('the file processed', processed, 120_000);

    const d = db(root);
    try {
      const file = d.prepare('SELECT chunk_count AS chunks, attempts FROM files').get() as { chunks: number; attempts: number };
      const live = d
        .prepare(`SELECT count(*) AS n FROM chunks c JOIN chunk_generations g ON g.id = c.generation WHERE g.state = 'live'`)
        .get() as { n: number };
      expect(file.attempts).toBe(1);
      expect(live.n).toBe(file.chunks);
    } finally {
      d.close();
    }
    expect(logsOf(second.k).filter((l) => l.msg === 'interrupted files re-queued')).toEqual([]);
  }, 240_000);
});
