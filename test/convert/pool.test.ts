import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { convertFile } from '../../src/convert/convert-file.js';
import { createConvertPool, type ConvertPool } from '../../src/convert/pool.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/convert/report-libreoffice.pdf', import.meta.url));

/**
 * A stand-in conversion thread speaking the pool's protocol: a path ending in `slow` never answers,
 * one ending in `big` allocates until its heap limit, one ending in `crash` ends the thread; any
 * other answers at once with its own thread id, so a test sees whether a thread was replaced.
 */
const STAND_IN = `
const { parentPort, threadId } = require('node:worker_threads');
parentPort.on('message', ({ id, req }) => {
  if (req.absPath.endsWith('slow')) for (;;) {}
  if (req.absPath.endsWith('big')) { const keep = []; for (;;) keep.push(new Array(1e5).fill(threadId)); }
  if (req.absPath.endsWith('crash')) process.exit(3);
  parentPort.postMessage({ id, ok: true, value: { readSha256: String(threadId), result: { ok: false, skip: 'no-text', reason: 'stand-in' } } });
});`;

let pool: ConvertPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('the conversion pool', () => {
  it('converts in a thread exactly as on this thread', async () => {
    pool = createConvertPool({ workers: 1, timeLimitMs: 60_000, memoryLimitMb: 256 });
    const there = await pool.convert({ absPath: FIXTURE, type: 'pdf' });
    const here = await convertFile({ absPath: FIXTURE, type: 'pdf' });
    expect(there).toEqual(here);
    expect(there).toMatchObject({
      readSha256: createHash('sha256').update(readFileSync(FIXTURE)).digest('hex'),
      result: { ok: true, units: 3 },
    });
  });

  it.each([
    ['pdf', 'report-libreoffice.pdf'],
    ['pptx', 'deck-pandoc.pptx'],
    ['doc', 'report.doc'],
    ['odt', 'report.odt'],
    ['ods', 'budget.ods'],
    ['odp', 'deck.odp'],
    ['rtf', 'wordpad-cp1251.rtf'],
    ['epub', 'book-epub3.epub'],
  ] as const)('gives byte-identical Markdown for the same %s, converted twice in threads and once here', async (type, name) => {
    const absPath = fileURLToPath(new URL(`../fixtures/convert/${name}`, import.meta.url));
    pool = createConvertPool({ workers: 2, timeLimitMs: 60_000, memoryLimitMb: 256 });
    const [one, two] = await Promise.all([pool.convert({ absPath, type }), pool.convert({ absPath, type })]);
    const here = await convertFile({ absPath, type });
    expect(one).toMatchObject({ result: { ok: true } });
    expect(two).toEqual(one);
    expect(here).toEqual(one);
  });

  it('stops a conversion past its time limit, names the setting, and converts the next file in a new thread', async () => {
    pool = createConvertPool({ workers: 1, timeLimitMs: 300, memoryLimitMb: 64, worker: STAND_IN });
    const before = await pool.convert({ absPath: '/a', type: 'pdf' });
    const slow = await pool.convert({ absPath: '/x/slow', type: 'pdf' });
    const after = await pool.convert({ absPath: '/b', type: 'pdf' });

    expect(slow).toEqual({
      readSha256: '',
      result: { ok: false, skip: 'convert-failed', reason: 'its conversion took longer than 0.3 s (limits.convertSeconds): stopped' },
    });
    expect(after).toMatchObject({ result: { reason: 'stand-in' } });
    expect((after as { readSha256: string }).readSha256).not.toBe((before as { readSha256: string }).readSha256);
  });

  it('stops a conversion past its memory limit and names the setting', async () => {
    pool = createConvertPool({ workers: 1, timeLimitMs: 60_000, memoryLimitMb: 32, worker: STAND_IN });
    const big = await pool.convert({ absPath: '/x/big', type: 'pdf' });
    expect(big).toMatchObject({
      result: {
        ok: false,
        skip: 'convert-failed',
        reason: 'its conversion needed more than 32 MB of memory (limits.convertMemoryMb): stopped',
      },
    });
    expect(await pool.convert({ absPath: '/b', type: 'pdf' })).toMatchObject({ result: { reason: 'stand-in' } });
  });

  it('answers a file whose thread died with a failure, and goes on', async () => {
    pool = createConvertPool({ workers: 2, timeLimitMs: 60_000, memoryLimitMb: 64, worker: STAND_IN });
    const answers = await Promise.all(['/1', '/x/crash', '/2', '/3'].map((absPath) => pool!.convert({ absPath, type: 'pdf' })));
    expect(answers[1]).toMatchObject({
      passing: true,
      result: { ok: false, skip: 'convert-failed', reason: expect.stringContaining('exited (code 3)') },
    });
    for (const i of [0, 2, 3]) expect(answers[i]).toMatchObject({ result: { reason: 'stand-in' } });
  });
});
