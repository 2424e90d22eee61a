import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';
import { hashFiles, startHashing, type HashInput, type HashOptions } from '../../../src/sync/sources/hash.js';
import { noThreadLeft, tempDir, threadCount } from './helpers.js';

const sha = (data: string): string => createHash('sha256').update(data).digest('hex');

type Fixture = { files: HashInput[]; expected: Map<string, { sha256: string }>; log: string };

/**
 * 300 files of distinct sizes (5 batches of up to 64 files for 2 workers). f0 is empty, so the
 * smallest: hashing goes largest first, so f0 is in the last batch.
 */
function fixture(): Fixture {
  const root = tempDir();
  const files: HashInput[] = [];
  const expected = new Map<string, { sha256: string }>();
  for (let i = 0; i < 300; i++) {
    const absPath = join(root, `f${i}.txt`);
    const content = `content ${i}\n`.repeat(i);
    writeFileSync(absPath, content);
    const st = statSync(absPath);
    files.push({ absPath, size: st.size, mtimeNs: mtimeNsOf(st), inode: st.ino });
    expected.set(absPath, { sha256: sha(content) });
  }
  return { files, expected, log: join(root, 'crashes.log') };
}

/**
 * A hash thread that runs `before` (JS over the call's `id`, its `batch`, and `parentPort`) on each batch, then the real
 * thread's code (serveHashBatches of hash-file.ts, next to the entry) on the same batch: `before` is
 * registered first, so it runs first. Both are registered at once: batches wait in the port until then.
 */
function wrapped(entry: URL, before: string): string {
  const hashFile = entry.href.replace(/hash-worker\.(ts|js)$/, 'hash-file.$1');
  return `const { parentPort } = process.getBuiltinModule('node:worker_threads');
import(${JSON.stringify(hashFile)}).then(({ serveHashBatches }) => {
  parentPort.on('message', ({ id, req: { files: batch } }) => { ${before} });
  serveHashBatches(parentPort);
});`;
}

/**
 * A worker hook: worker `index` exits with code 1 before hashing a batch when `crashIf(index)`
 * (JS over `batch` and `n`, this worker's batch count from 1) holds, after appending
 * `worker <index> batch <n>` to `log`. null: the worker runs the default entry.
 */
function crashing(log: string, crashIf: (index: number) => string | null): NonNullable<HashOptions['worker']> {
  return (entry, index) => {
    const condition = crashIf(index);
    if (condition === null) return entry;
    return `globalThis.n = 0;
${wrapped(
  entry,
  `n += 1;
  if (${condition}) {
    process.getBuiltinModule('node:fs').appendFileSync(${JSON.stringify(log)}, 'worker ${index} batch ' + n + '\\n');
    process.exit(1);
  }`,
)}`;
  };
}

const crashesIn = (log: string): string[] => readFileSync(log, 'utf8').trim().split('\n').sort();

describe('hashFiles when hash workers die (mode workers, concurrency 2)', () => {
  it.each([
    {
      what: 'one worker crashes on its first batch',
      crashIf: (index: number) => (index === 0 ? 'n === 1' : null),
      crashes: ['worker 0 batch 1'],
    },
    {
      what: 'every worker crashes on its first batch (the rest is hashed in-process)',
      crashIf: () => 'n === 1',
      crashes: ['worker 0 batch 1', 'worker 1 batch 1'],
    },
    {
      what: 'every worker crashes on its second batch',
      crashIf: () => 'n === 2',
      crashes: ['worker 0 batch 2', 'worker 1 batch 2'],
    },
    {
      what: 'a worker exits during the last batch, which is not handed to the other worker',
      crashIf: () => 'batch.some((f) => f.absPath.endsWith("/f0.txt"))',
      crashes: [expect.stringMatching(/^worker [01] batch [1-5]$/)],
    },
  ])('$what: every file still gets its sha256 and no worker thread is left', async ({ crashIf, crashes }) => {
    const { files, expected, log } = fixture();
    const threadsBefore = threadCount();

    const results = await hashFiles(files, { mode: 'workers', concurrency: 2, worker: crashing(log, crashIf) });

    expect(crashesIn(log)).toEqual(crashes);
    expect(results).toEqual(expected);
    await noThreadLeft(threadsBefore);
  });

  it('hashes a batch answered with the wrong number of outcomes in-process, and never uses that worker again', async () => {
    const { files, expected } = fixture();
    // Worker 0 answers each batch twice: first with no outcomes, then (its own listener) with the real ones.
    const worker: HashOptions['worker'] = (entry, index) =>
      index === 0 ? wrapped(entry, 'parentPort.postMessage({ id, ok: true, value: [] });') : entry;
    const threadsBefore = threadCount();

    const results = await hashFiles(files, { mode: 'workers', concurrency: 2, worker });

    expect(results).toEqual(expected);
    await noThreadLeft(threadsBefore);
  });

  it.each([
    { what: 'one worker', failing: [1] },
    { what: 'every worker', failing: [0, 1] },
  ])('hashes every file when $what cannot start, and leaves no thread running', async ({ failing }) => {
    const { files, expected } = fixture();
    const started: number[] = [];
    const worker: HashOptions['worker'] = (entry, index) => {
      if (failing.includes(index)) throw new Error('cannot start');
      started.push(index);
      return entry;
    };
    const threadsBefore = threadCount();

    const results = await hashFiles(files, { mode: 'workers', concurrency: 2, worker });

    expect(results).toEqual(expected);
    expect(started).toEqual([0, 1].filter((i) => !failing.includes(i)));
    await noThreadLeft(threadsBefore);
  });
});

describe('startHashing fed by a walk that never yields', () => {
  it('queues a bounded number of batches to the threads and hashes the rest itself while they are busy', async () => {
    const { files, expected, log } = fixture();
    // The same files eight times over (each a batch entry of its own): 38 batches of 64.
    const many = Array.from({ length: 8 }, () => files.map((f) => ({ ...f }))).flat();
    const release = `${log}.go`;
    // Both threads hold every batch until the test lets them go: only the walk's own thread makes progress.
    const held = `const fs = process.getBuiltinModule('node:fs');
      while (!fs.existsSync(${JSON.stringify(release)})) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);`;
    let hashedHere = 0;
    const hashing = startHashing({
      mode: 'workers',
      concurrency: 2,
      worker: (entry) => wrapped(entry, held),
      onHashed: (n) => (hashedHere += n),
    });

    for (const file of many) hashing.add(file);
    // Answers from the threads land only once this thread yields: what was counted so far was hashed here.
    // At most 16 batches queued to the threads, and one batch still filling.
    expect(hashedHere).toBeGreaterThanOrEqual(many.length - 16 * 64 - 64);
    writeFileSync(release, '');
    const results = await hashing.done();

    expect(existsSync(release)).toBe(true);
    expect(results).toEqual(expected);
  });
});
