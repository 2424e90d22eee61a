import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// A child process of its own, so that what is measured is its resident size alone: it fills 64 MiB
// of malloc's heap with 64 KiB buffers, keeps one in eight (the rest cannot return from the heap's
// top on their own: they are holes between live ones) and frees the others.
const script = `
import { readFileSync } from 'node:fs';
import { trimNativeHeap } from ${JSON.stringify(new URL('../../src/shared/native-heap.ts', import.meta.url).href)};
const rssMb = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
let buffers = [];
for (let i = 0; i < 1024; i++) buffers.push(new Uint8Array(new ArrayBuffer(64 * 1024)).fill(1));
buffers = buffers.filter((_, i) => i % 8 === 0);
globalThis.gc();
await new Promise((r) => setTimeout(r, 200));
const before = rssMb();
const trimmed = trimNativeHeap();
const after = rssMb();
console.log(JSON.stringify({ trimmed, before, after, kept: buffers.length }));
`;

describe('trimNativeHeap', () => {
  it("gives malloc's free pages back to the system", () => {
    const res = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(res.stderr).toBe('');
    const r = JSON.parse(res.stdout) as { trimmed: boolean; before: number; after: number; kept: number };
    expect(r.trimmed).toBe(true);
    expect(r.kept).toBe(128);
    // 56 MiB were freed between live buffers: most of it leaves the resident size.
    expect(r.before - r.after).toBeGreaterThan(32);
  });
});

// Six worker threads allocate at once; glibc's malloc_stats() (on stderr) lists one "Arena N:" per arena.
const arenasScript = (tune: boolean): string => `
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { tuneMalloc } from ${JSON.stringify(new URL('../../src/shared/native-heap.ts', import.meta.url).href)};
const tuned = ${tune} ? tuneMalloc() : false;
const code = "const k = []; for (let i = 0; i < 200; i++) k.push(new Uint8Array(new ArrayBuffer(16384)).fill(1)); import('node:worker_threads').then((w) => w.parentPort.postMessage(k.length)); setTimeout(() => {}, 2000);";
const workers = Array.from({ length: 6 }, () => new Worker(code, { eval: true }));
await Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
createRequire(import.meta.url)('koffi').load('libc.so.6').func('void malloc_stats(void)')();
console.log(JSON.stringify({ tuned }));
process.exit(0);
`;

function arenas(tune: boolean): { tuned: boolean; arenas: number } {
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', arenasScript(tune)], {
    encoding: 'utf8',
    cwd: new URL('.', import.meta.url).pathname,
  });
  if (res.stdout === '') throw new Error(res.stderr);
  const { tuned } = JSON.parse(res.stdout) as { tuned: boolean };
  return { tuned, arenas: res.stderr.match(/^Arena \d+:/gm)?.length ?? 0 };
}

describe('tuneMalloc', () => {
  it('makes threads started after it share arenas instead of one each', () => {
    const plain = arenas(false);
    const tuned = arenas(true);
    expect(tuned.tuned).toBe(true);
    expect(plain.arenas).toBeGreaterThanOrEqual(7);
    expect(tuned.arenas).toBeLessThan(plain.arenas - 3);
  });
});

// koffi is an optional dependency: a child in which it cannot be found, as on an install without it.
const withoutKoffiScript = `
import Module from 'node:module';
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'koffi') throw Object.assign(new Error("Cannot find module 'koffi'"), { code: 'MODULE_NOT_FOUND' });
  return resolve.call(this, request, ...rest);
};
const { tuneMalloc, trimNativeHeap } = await import(${JSON.stringify(new URL('../../src/shared/native-heap.ts', import.meta.url).href)});
console.log(JSON.stringify({ tuned: tuneMalloc(), trimmed: trimNativeHeap() }));
`;

describe('without koffi', () => {
  it('leaves malloc as it is and says so, without an error', () => {
    const res = spawnSync(process.execPath, ['--input-type=module', '-e', withoutKoffiScript], { encoding: 'utf8' });
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout)).toEqual({ tuned: false, trimmed: false });
  });
});
