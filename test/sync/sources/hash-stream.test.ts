import { createHash } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';
import { hashFiles, startHashing, type HashInput } from '../../../src/sync/sources/hash.js';
import { noThreadLeft, tempDir, threadCount } from './helpers.js';

function files(count: number): { inputs: HashInput[]; expected: Map<string, { sha256: string }> } {
  const root = tempDir();
  const inputs: HashInput[] = [];
  const expected = new Map<string, { sha256: string }>();
  for (let i = 0; i < count; i++) {
    const absPath = join(root, `f${i}.txt`);
    const content = `line ${i}\n`.repeat(1 + (i % 9));
    writeFileSync(absPath, content);
    const st = statSync(absPath);
    inputs.push({ absPath, size: st.size, mtimeNs: mtimeNsOf(st), inode: st.ino });
    expected.set(absPath, { sha256: createHash('sha256').update(content).digest('hex') });
  }
  return { inputs, expected };
}

describe('startHashing (files handed over one at a time)', () => {
  it.each(['auto', 'workers', 'in-process'] as const)(
    'mode %s: every file gets its hash, as hashFiles gives it; no thread is left',
    async (mode) => {
      const { inputs, expected } = files(1300);
      const before = threadCount();
      const hashing = startHashing({ mode });

      for (const file of inputs) hashing.add(file);
      const results = await hashing.done();

      expect(results).toEqual(expected);
      expect(results).toEqual(await hashFiles(inputs, { mode: 'in-process' }));
      await noThreadLeft(before);
    },
  );

  it('auto: starts its workers only once enough files came (a few are hashed in-process, in done)', async () => {
    const { inputs, expected } = files(1100);
    const before = threadCount();
    const hashing = startHashing({ mode: 'auto' });

    for (const file of inputs.slice(0, 1000)) hashing.add(file);
    const threadsWhileFew = threadCount();
    for (const file of inputs.slice(1000)) hashing.add(file);
    const threadsWhileMany = threadCount();
    const results = await hashing.done();

    expect(threadsWhileFew).toBeLessThanOrEqual(before);
    expect(threadsWhileMany).toBeGreaterThan(threadsWhileFew);
    expect(results).toEqual(expected);
    await noThreadLeft(before);
  });

  it('nothing handed over: an empty result and no thread started; add after done is refused', async () => {
    const hashing = startHashing({ mode: 'workers' });

    expect(await hashing.done()).toEqual(new Map());
    expect(() => hashing.add({ absPath: '/x', size: 1, mtimeNs: '1', inode: 1 })).toThrow('add() after done()');
  });

  it('cancel stops the workers without hashing the rest', async () => {
    const { inputs } = files(400);
    const before = threadCount();
    const hashedHere: string[] = [];
    // Workers that take their first batch and never answer: cancel must not wait for them, nor hash
    // here what they hold or what is still waiting for a batch (400 files: 6 batches sent, 16 held).
    const stuck =
      "const { parentPort } = process.getBuiltinModule('node:worker_threads'); parentPort.on('message', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));";
    const hashing = startHashing({ mode: 'workers', worker: () => stuck, beforeRestat: (path) => hashedHere.push(path) });
    for (const file of inputs) hashing.add(file);
    const threadsWhileHashing = threadCount();

    await hashing.cancel();

    expect(threadsWhileHashing).toBeGreaterThan(before);
    expect(hashedHere).toEqual([]);
    await noThreadLeft(before);
    expect(() => hashing.add(inputs[0] as HashInput)).toThrow('add() after done()');
  });
});
