import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createIngestPool, type IngestPool } from '../../src/service/ingest/ingest-pool.js';

// The pool itself, without the service: a task stopped at its limit fails alone, and the pool keeps its size.

let dir: string | undefined;
let pool: IngestPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function file(name: string, content: string): { name: string; storedPath: string } {
  dir ??= mkdtempSync(join(tmpdir(), 'kbsync-pool-'));
  const storedPath = join(dir, name);
  writeFileSync(storedPath, content);
  return { name, storedPath };
}

/** An XML file of `items` records: parsed whole, it holds a parser for seconds. */
const bigXml = (items: number): string =>
  ['<stock>', ...Array.from({ length: items }, (_, i) => `<item><id>${i}</id><name>widget number ${i}</name></item>`), '</stock>'].join(
    '\n',
  );

async function chunksOf(p: IngestPool, f: { name: string; storedPath: string }): Promise<string[]> {
  const texts: string[] = [];
  for await (const batch of p.fileBatches(f)) texts.push(...batch.map((c) => (typeof c === 'string' ? c : c.text)));
  return texts;
}

describe('the ingest pool, directly', () => {
  it('fails only the call stopped at the time limit: a file mid-read beside it finishes, and both workers serve again', async () => {
    pool = createIngestPool({ workers: 2, timeLimitMs: 500, parsing: {}, batchSize: 1, batchChars: 1 << 20 });
    const slow = chunksOf(pool, file('stock.xml', bigXml(300_000))).catch((err: unknown) => err);
    const sections = ['alpha', 'beta', 'gamma'].map((w) => `# ${w}\n\n${`${w} words here. `.repeat(400)}`);
    // A file read a batch at a time on the other worker: its first batch is taken, the rest after the slow one is stopped.
    const beside = pool.fileBatches(file('notes.md', sections.join('\n\n')));
    const first = await beside.next();
    const failed = await slow;
    const texts = first.done === true ? [] : [...first.value];
    for await (const batch of beside) texts.push(...batch);

    expect(failed).toMatchObject({ code: 'parse_failed', message: expect.stringMatching(/^parsing stopped at the time limit of 0.5 s/) });
    const all = texts.map((c) => (typeof c === 'string' ? c : c.text)).join(' ');
    for (const w of ['alpha', 'beta', 'gamma']) expect(all).toContain(`${w} words here.`);
    expect(texts.length).toBeGreaterThan(2);
    // Two calls at once again, an entry among them: the stopped worker was replaced.
    const both = await Promise.all([chunksOf(pool, file('a.md', '# A\n\nalpha')), pool.entryChunks({ title: null, content: 'beta' })]);
    expect(both.map((t) => t.join(''))).toEqual([expect.stringContaining('alpha'), 'beta']);
    expect(pool.size).toBe(2);
  }, 120_000);

  it("counts the worker thread's CPU time, not the time it waits: a file that arrives late past the limit is processed", async () => {
    pool = createIngestPool({ workers: 1, timeLimitMs: 300, parsing: {}, batchSize: 64, batchChars: 1 << 20 });
    dir ??= mkdtempSync(join(tmpdir(), 'kbsync-pool-'));
    // A named pipe: the worker's read waits, using no CPU, until the words are written well after the limit.
    const storedPath = join(dir, 'late.txt');
    execFileSync('mkfifo', [storedPath]);
    const chunks = chunksOf(pool, { name: 'late.txt', storedPath });
    await new Promise((resolve) => setTimeout(resolve, 1200));
    writeFileSync(storedPath, 'words that came late');
    expect(await chunks).toEqual(['words that came late']);
  }, 60_000);

  it('fails a task with its own error, its errno code kept, and goes on', async () => {
    pool = createIngestPool({ workers: 1, parsing: {}, batchSize: 64, batchChars: 1 << 20 });
    const err = await chunksOf(pool, { name: 'gone.txt', storedPath: join(tmpdir(), 'kbsync-no-such-file.txt') }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ENOENT' });
    expect(await chunksOf(pool, file('ok.txt', 'still here'))).toEqual(['still here']);
  }, 60_000);
  it('reads the next batch while one is written; a batch that fails is thrown where it is awaited, and the file after it is read', async () => {
    pool = createIngestPool({ workers: 1, parsing: {}, batchSize: 100, batchChars: 1 << 20 });
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      // Rows first, then a quoted field never closed: the parse fails past the first batches.
      const rows = Array.from({ length: 2000 }, (_, i) => `row ${i},${'value '.repeat(40)}`);
      const csv = file('broken.csv', ['name,value', ...rows, `late,"${'x'.repeat(5_000_000)}`].join('\n'));
      const written: string[] = [];
      const failure = await (async () => {
        for await (const batch of pool.fileBatches(csv)) {
          // A write slower than the parse: the batch asked ahead fails meanwhile.
          await new Promise((r) => setTimeout(r, 1000));
          written.push(...batch.map((c) => (typeof c === 'string' ? c : c.text)));
        }
      })().catch((err: unknown) => err);

      expect(written.length).toBeGreaterThan(0);
      expect(failure).toMatchObject({ code: 'parse_failed' });
      await new Promise((r) => setTimeout(r, 100));
      expect(rejections).toEqual([]);
      expect(await chunksOf(pool, file('ok.txt', 'still here'))).toEqual(['still here']);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  }, 60_000);
  it('on close, fails the task waiting for a worker and starts no worker for it', async () => {
    const p = createIngestPool({ workers: 1, timeLimitMs: 60_000, parsing: {}, batchSize: 64, batchChars: 1 << 20 });
    pool = p;
    const running = chunksOf(p, file('stock.xml', bigXml(300_000))).catch((err: unknown) => err);
    const waiting = chunksOf(p, file('a.md', '# A\n\nalpha')).catch((err: unknown) => err);
    await expect.poll(() => p.running, { timeout: 10_000 }).toBe(1);

    await p.close();

    expect(await waiting).toMatchObject({ message: 'the ingest pool is closed' });
    expect(await running).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 200));
    expect(p.running).toBe(0);
  }, 60_000);
});
