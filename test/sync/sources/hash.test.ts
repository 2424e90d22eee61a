import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hashFiles, inProcessPays, type HashInput } from '../../../src/sync/sources/hash.js';
import { tempDir, testdir } from './helpers.js';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';

const sha = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

function inputOf(absPath: string): HashInput {
  const st = statSync(absPath);
  return { absPath, size: st.size, mtimeNs: mtimeNsOf(st), inode: st.ino };
}

const big = randomBytes(3 * 1024 * 1024 + 12345); // 3 MiB and a bit: several 1 MiB reads, a partial last one
const contents: Record<string, Buffer> = {
  'empty.txt': Buffer.alloc(0),
  'small.md': Buffer.from('# hello\n'),
  'exact.bin': randomBytes(1024 * 1024),
  'big.bin': big,
};

describe.each(['in-process', 'workers'] as const)('hashFiles (%s)', (mode) => {
  it('gives the same SHA-256 as node:crypto, for empty, small, chunk-sized and multi-chunk files', async () => {
    const root = testdir(contents);
    const files = Object.keys(contents).map((name) => inputOf(join(root, name)));

    const results = await hashFiles(files, { mode, concurrency: 2 });

    expect(Object.fromEntries([...results].map(([p, r]) => [p.slice(root.length + 1), r]))).toEqual(
      Object.fromEntries(Object.entries(contents).map(([name, data]) => [name, { sha256: sha(data) }])),
    );
  });

  it('defers a file that changed since the scan (grew, rewritten in place, replaced, or vanished)', async () => {
    const root = testdir({ 'grown.md': 'a', 'rewritten.md': 'aaaa', 'replaced.md': 'x', 'gone.md': 'y', 'stable.md': 'z' });
    const files = ['grown.md', 'rewritten.md', 'replaced.md', 'gone.md', 'stable.md'].map((n) => inputOf(join(root, n)));
    appendFileSync(join(root, 'grown.md'), 'more');
    writeFileSync(join(root, 'rewritten.md'), 'bbbb');
    const [rewritten] = files.slice(1, 2);
    if (rewritten !== undefined) rewritten.mtimeNs = (BigInt(rewritten.mtimeNs) - 1_000_000n).toString(); // as if written a ms after the scan
    writeFileSync(join(root, 'new.md'), 'x');
    renameSync(join(root, 'new.md'), join(root, 'replaced.md'));
    rmSync(join(root, 'gone.md'));

    const results = await hashFiles(files, { mode });

    expect(results.get(join(root, 'grown.md'))).toEqual({ deferred: 'changed since the scan' });
    expect(results.get(join(root, 'rewritten.md'))).toEqual({ deferred: 'changed since the scan' });
    expect(results.get(join(root, 'replaced.md'))).toEqual({ deferred: 'changed since the scan' });
    expect(results.get(join(root, 'gone.md'))).toEqual({ deferred: 'vanished since the scan' });
    expect(results.get(join(root, 'stable.md'))).toEqual({ sha256: sha('z') });
  });

  it('reports a file that cannot be read as unreadable', async () => {
    const root = testdir({ 'dir.md/inner.md': '' });

    const results = await hashFiles([inputOf(join(root, 'dir.md'))], { mode });

    expect(results.get(join(root, 'dir.md'))).toEqual({ unreadable: expect.stringContaining('EISDIR') });
  });
});

describe('hashFiles while files change', () => {
  it.each([
    ['appended to', (p: string) => appendFileSync(p, 'tail')],
    ['replaced', (p: string) => (writeFileSync(`${p}.new`, 'other'), renameSync(`${p}.new`, p))],
    ['deleted', (p: string) => rmSync(p)],
  ])('defers a file %s between its read and its re-stat, never giving a wrong hash', async (_what, change) => {
    const root = testdir({ 'a.md': big, 'b.md': 'steady' });
    const files = [inputOf(join(root, 'a.md')), inputOf(join(root, 'b.md'))];

    const results = await hashFiles(files, { mode: 'in-process', beforeRestat: (p) => p.endsWith('a.md') && change(p) });

    expect(results.get(join(root, 'a.md'))).toEqual({ deferred: expect.stringMatching(/while it was hashed$/) });
    expect(results.get(join(root, 'b.md'))).toEqual({ sha256: sha('steady') });
  });
});

describe('hashFiles with many files', () => {
  it('spreads many files over the worker pool in batches and keys every result by path', async () => {
    const root = tempDir();
    const names = Array.from({ length: 300 }, (_, i) => `f${i}.txt`);
    names.forEach((n, i) => writeFileSync(join(root, n), `content ${i}\n`.repeat(i)));
    const files = names.map((n) => inputOf(join(root, n)));

    const results = await hashFiles(files, { concurrency: 3, mode: 'workers' });

    expect(results.size).toBe(300);
    names.forEach((n) => expect(results.get(join(root, n))).toEqual({ sha256: sha(readFileSync(join(root, n))) }));
  });

  it('returns an empty map for no files', async () => {
    expect(await hashFiles([])).toEqual(new Map());
  });
});

describe('hashFiles from compiled JavaScript (as from dist/)', () => {
  it('starts its workers without the TypeScript sources', async () => {
    const { default: ts } = await import('typescript');
    const out = tempDir('kbsync-dist-');
    const src = fileURLToPath(new URL('../../../src', import.meta.url));
    const files = [
      'sync/sources/hash.ts',
      'sync/sources/hash-file.ts',
      'sync/sources/hash-thread.ts',
      'sync/sources/hash-worker.ts',
      'sync/sources/fingerprint.ts',
      'shared/worker-entry.ts',
      'shared/worker-channel.ts',
      'shared/errors.ts',
    ];
    for (const file of files) {
      const js = ts.transpileModule(readFileSync(join(src, file), 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true },
      }).outputText;
      mkdirSync(dirname(join(out, file)), { recursive: true });
      writeFileSync(join(out, file.replace(/\.ts$/, '.js')), js);
    }
    writeFileSync(join(out, 'package.json'), '{"type":"module"}');
    symlinkSync(join(src, '../node_modules'), join(out, 'node_modules'));
    const data = join(out, 'data.bin');
    writeFileSync(data, big);
    const script = `
      import { statSync } from 'node:fs';
      import { mtimeNsOf } from './sync/sources/fingerprint.js';
      import { hashFiles } from './sync/sources/hash.js';
      const st = statSync(${JSON.stringify(data)});
      const file = { absPath: ${JSON.stringify(data)}, size: st.size, mtimeNs: mtimeNsOf(st), inode: st.ino };
      const r = await hashFiles([file], { mode: 'workers' });
      process.stdout.write(JSON.stringify(r.get(file.absPath)));`;
    writeFileSync(join(out, 'run.js'), script);

    const stdout = execFileSync(process.execPath, [join(out, 'run.js')], { cwd: out, encoding: 'utf8' });

    expect(JSON.parse(stdout)).toEqual({ sha256: sha(big) });
  });
});

describe('inProcessPays (auto mode)', () => {
  const MiB = 1 << 20;
  it('hashes on the calling thread only batches small in both count and bytes', () => {
    expect(inProcessPays(1000, 35 * MiB)).toBe(true); // the bench's 1%-changed plan
    expect(inProcessPays(1024, 96 * MiB - 1)).toBe(true);
    expect(inProcessPays(1025, 1 * MiB)).toBe(false); // many small files: workers overlap their reads
    expect(inProcessPays(3, 96 * MiB)).toBe(false); // a few huge files: two threads read them faster
    expect(inProcessPays(1, 10 * 1024 * MiB)).toBe(false);
  });
});
