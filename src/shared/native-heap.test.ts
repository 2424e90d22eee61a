import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// A child process of its own, so that what is measured is its resident size alone: it fills 64 MiB
// of malloc's heap with 64 KiB buffers, keeps one in eight (the rest cannot return from the heap's
// top on their own: they are holes between live ones) and frees the others.
const script = `
import { readFileSync } from 'node:fs';
import { trimNativeHeap } from ${JSON.stringify(new URL('./native-heap.ts', import.meta.url).href)};
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
