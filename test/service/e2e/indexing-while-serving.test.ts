import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { KBSYNC_BIN } from '../../helpers/build-dist.js';
import { apiFor, eventually, multipartBody, send, startHarness, tempDir, upload, type Harness } from '../helpers.js';

// A large file is written in many short transactions, with requests answered between them; it
// becomes searchable all at once, and only its last transaction marks it processed.

/** A text file of many short paragraphs about herons: several hundred chunks, tens of write batches. */
const HERONS = Array.from({ length: 120_000 }, (_, i) => `Paragraph ${i}: the herons nest by the river, count ${i}.\n\n`).join('');

type Progress = { status: string; chunkCount: number | null; staged: number; live: number };

/** The file's status and its chunks as stored: written but not yet searchable (staging), and searchable (live). */
function progress(db: Database, fileId: number): Progress {
  const file = db.prepare('SELECT status, chunk_count AS chunkCount FROM files WHERE id = ?').get(fileId) as {
    status: string;
    chunkCount: number | null;
  };
  const count = (state: string): number =>
    (
      db
        .prepare('SELECT COUNT(*) AS n FROM chunks c JOIN chunk_generations g ON g.id = c.generation WHERE g.source_id = ? AND g.state = ?')
        .get(fileId, state) as { n: number }
    ).n;
  return { ...file, staged: count('staging'), live: count('live') };
}

/** Polls (real time) until part of the file's chunks are written, or the file is past processing. */
function partlyWritten(db: Database, fileId: number): Promise<Progress> {
  return eventually(async () => {
    const p = progress(db, fileId);
    return p.status === 'queued' || (p.status === 'processing' && p.staged === 0) ? undefined : p;
  }, 120_000);
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function readOnly(dataDir: string): Database {
  const db = new Sqlite(join(dataDir, 'service.db'), { readonly: true, fileMustExist: true });
  cleanups.push(() => {
    db.close();
  });
  return db;
}

describe('indexing a large file while serving', () => {
  it('answers a query made while the file is half written, before the file is done, and finds none of it until it is', async () => {
    const h: Harness = await startHarness();
    cleanups.push(() => h.close());
    const api = apiFor(h, { plan: 'pro', credits: 1000 });
    const id = (await upload(api, 'herons.txt', HERONS)).body.id as number;
    const db = readOnly(h.dataDir);

    const before = await partlyWritten(db, id);
    const answer = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'herons river', top_k: 3 } });
    const after = progress(db, id);
    const done = await eventually(async () => {
      const p = progress(db, id);
      return p.status === 'processed' ? p : undefined;
    }, 120_000);
    const found = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query: 'herons river', top_k: 3 } });

    // The query was answered between two of the file's transactions: after some chunks, before the last.
    expect(before.status).toBe('processing');
    expect(answer.status).toBe(200);
    expect(after).toMatchObject({ status: 'processing', live: 0 });
    expect(after.staged).toBeGreaterThan(0);
    expect(after.staged).toBeLessThan(done.live);
    // Half a file is never searchable: the query found nothing of it; once processed, all of it is.
    expect(answer.body.results).toEqual([]);
    expect(done).toMatchObject({ staged: 0, chunkCount: done.live });
    expect(found.body.results).toHaveLength(3);
  });

  it('leaves a file killed mid-indexing pending, with nothing of it searchable, and indexes it whole on the next start', async () => {
    const dir = tempDir('kbsync-serve-kill-');
    cleanups.push(dir.cleanup);
    const dataDir = join(dir.path, 'data');
    const serve = async (): Promise<{ child: ChildProcess; url: string; out: () => string }> => {
      const child = spawn(process.execPath, [KBSYNC_BIN, 'serve', '--port', '0', '--data', dataDir], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir.path },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      cleanups.push(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const url = await eventually(async () => /listening on (\S+)/.exec(out)?.[1], 30_000);
      return { child, url, out: () => out };
    };
    const first = await serve();
    const key = await eventually(async () => /api key: (\S+)/.exec(first.out())?.[1]);
    const headers = { 'x-api-key': key };
    const { body, contentType } = multipartBody({ name: 'herons.txt', content: HERONS });
    const id = (await send(`${first.url}/api/v1/ext/files/upload`, 'POST', { ...headers, 'content-type': contentType }, body)).body
      .id as number;
    const db = readOnly(dataDir);

    const before = await partlyWritten(db, id);
    const killed = new Promise((resolve) => first.child.once('close', resolve));
    first.child.kill('SIGKILL');
    await killed;
    const afterKill = progress(db, id);

    const second = await serve();
    const done = await eventually(async () => {
      const p = progress(db, id);
      return p.status === 'processed' ? p : undefined;
    }, 120_000);
    const indexes = db
      .prepare(
        `SELECT COUNT(DISTINCT c.chunk_index) AS n FROM chunks c JOIN chunk_generations g ON g.id = c.generation WHERE g.source_id = ? AND g.state = 'live'`,
      )
      .get(id) as { n: number };
    const stopped = new Promise((resolve) => second.child.once('close', resolve));
    second.child.kill('SIGTERM');
    await stopped;

    expect(before.status).toBe('processing');
    // Killed with part of its chunks written: still to do, not processed with half of them.
    expect(afterKill).toMatchObject({ status: 'processing', chunkCount: null, live: 0 });
    expect(afterKill.staged).toBeGreaterThan(0);
    // The next start takes it up again and indexes it whole, once.
    expect(done.chunkCount).toBeGreaterThan(afterKill.staged);
    expect(done).toMatchObject({ staged: 0, live: done.chunkCount });
    expect(indexes.n).toBe(done.chunkCount);
  });
});
