import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConvertAnswer, ConvertRequest } from '../../src/convert/convert-file.js';
import type { ConvertPool } from '../../src/convert/pool.js';
import { ConversionCache, convertHashed, markdownPath } from '../../src/sync/sources/converted.js';
import type { ObservedFile } from '../../src/sync/types.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A pool that answers from a table by path and counts its calls. */
function fakePool(answers: Record<string, (req: ConvertRequest) => ConvertAnswer>): ConvertPool & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    convert: async (req) => {
      calls.push(req.absPath);
      return (answers[req.absPath] as (req: ConvertRequest) => ConvertAnswer)(req);
    },
    close: async () => {},
  };
}

const converted =
  (original: string, markdown: string): (() => ConvertAnswer) =>
  () => ({
    readSha256: sha(original),
    result: { ok: true, markdown, units: 2 },
    markdownSha256: sha(markdown),
    markdownBytes: Buffer.byteLength(markdown),
  });

function file(path: string, original: string): ObservedFile {
  return { source: 'docs', path, absPath: `/docs/${path}`, size: original.length, mtimeNs: '1', inode: 1, sha256: sha(original) };
}

function stage(pool: ConvertPool): { cache: ConversionCache; pool: () => ConvertPool; dir: string } {
  const stateDir = mkdtempSync(join(tmpdir(), 'kbsync-converted-'));
  dirs.push(stateDir);
  const cache = new ConversionCache(stateDir);
  return { cache, pool: () => pool, dir: cache.dir };
}

describe('convertHashed and the conversion cache', () => {
  it('gives a document its Markdown’s hash, keeps the Markdown, and never converts the same bytes twice', async () => {
    const pool = fakePool({ '/docs/a.pdf': converted('A', '# A\n'), '/docs/b.pdf': converted('A', '# A\n') });
    const s = stage(pool);
    const a = file('a.pdf', 'A');

    expect((await convertHashed([a], s)).size).toBe(0);
    expect(a).toMatchObject({ sha256: sha('# A\n'), converted: { type: 'pdf', markdownBytes: 4, units: 2, originalSha256: sha('A') } });
    expect(readFileSync(markdownPath(s.dir, sha('# A\n')), 'utf8')).toBe('# A\n');
    expect(readFileSync(join(s.dir, '.gitignore'), 'utf8')).toBe('*\n');

    // The same bytes under another name (a copy), and again later: from the cache.
    const b = file('b.pdf', 'A');
    const again = file('a.pdf', 'A');
    await convertHashed([b, again], s);
    expect(pool.calls).toEqual(['/docs/a.pdf']);
    expect(b.sha256).toBe(sha('# A\n'));
    expect(again.converted?.originalSha256).toBe(sha('A'));
  });

  it('keeps a failure by the bytes: not converted again until they change', async () => {
    const pool = fakePool({
      '/docs/locked.pdf': () => ({ readSha256: sha('L'), result: { ok: false, skip: 'encrypted', reason: 'password' } }),
    });
    const s = stage(pool);

    const first = await convertHashed([file('locked.pdf', 'L')], s);
    const second = await convertHashed([file('locked.pdf', 'L')], s);

    expect([...first.values()]).toEqual([{ source: 'docs', path: 'locked.pdf', reason: 'encrypted', detail: 'password', size: 1 }]);
    expect([...second.values()]).toEqual([...first.values()]);
    expect(pool.calls).toHaveLength(1);
  });

  it('does not keep a failure of the thread (it could not start, it died): the next pass tries again', async () => {
    const pool = fakePool({
      '/docs/a.pdf': () => ({ readSha256: '', result: { ok: false, skip: 'convert-failed', reason: 'the thread died' }, passing: true }),
    });
    const s = stage(pool);
    expect([...(await convertHashed([file('a.pdf', 'A')], s)).values()]).toMatchObject([{ reason: 'convert-failed' }]);
    await convertHashed([file('a.pdf', 'A')], s);
    expect(pool.calls).toHaveLength(2);
  });

  it('converts again when the kept Markdown is gone, and defers a file whose bytes moved since they were hashed', async () => {
    const pool = fakePool({ '/docs/a.pdf': converted('A', '# A\n'), '/docs/moved.pdf': converted('other bytes', '# M\n') });
    const s = stage(pool);
    await convertHashed([file('a.pdf', 'A')], s);
    rmSync(join(s.dir, 'md'), { recursive: true });
    const a = file('a.pdf', 'A');
    await convertHashed([a], s);
    expect(pool.calls).toEqual(['/docs/a.pdf', '/docs/a.pdf']);
    expect(a.sha256).toBe(sha('# A\n'));

    const moved = file('moved.pdf', 'M');
    const skipped = await convertHashed([moved], s);
    expect(skipped.size).toBe(0);
    expect(moved.sha256).toBeNull();
    expect(moved.converted).toBeUndefined();
  });
});
