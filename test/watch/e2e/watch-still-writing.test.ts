import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import type { E2eDataset } from '../../helpers/e2e-service.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import type { KbsyncChild } from '../../helpers/kbsync-child.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { startDaemon, logsOf, untilDaemonReady, until, useChildren, type LogLine } from '../../helpers/daemon-children.js';

/*
 * A file still being written when the daemon looks at it: a copy that pauses mid-file (one descriptor
 * held open, as cp or dd over a slow network) or writes steadily. Real processes on both sides: the
 * daemon, and a node child that writes the file. The file is 12 MiB, so that its half (6 MiB, 6
 * credits) and its whole (12 credits) cost apart.
 */

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();

const MIB = 1 << 20;
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

function workspace(ds: E2eDataset): Workspace {
  return createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { watch: { debounceMs: 300 } } });
}

async function watching(ws: Workspace): Promise<KbsyncChild> {
  const k = startDaemon(children, ws);
  await untilDaemonReady(k, `${ws.statePath}.watch.json`);
  return k;
}

/** 12 MiB of distinct lines (each chunk its own bytes). */
function content(): Buffer {
  const line = (i: number): string => `line ${String(i).padStart(8, '0')} of a long copy, still being written\n`;
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < 12 * MIB; i++) {
    const l = line(i);
    lines.push(l);
    size += l.length;
  }
  return Buffer.from(lines.join('')).subarray(0, 12 * MIB);
}

/**
 * A child process writing `data` to `path` through one descriptor, in `parts` writes with `pauseMs`
 * between them (the descriptor held open throughout), then closing it.
 */
async function writeSlowly(path: string, data: Buffer, parts: number, pauseMs: number): Promise<void> {
  const script = `
    const fs = require('node:fs');
    const [path, parts, pauseMs] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
    const data = fs.readFileSync(0);
    const fd = fs.openSync(path, 'w');
    const step = Math.ceil(data.length / parts);
    let at = 0;
    const next = () => {
      fs.writeSync(fd, data, at, Math.min(step, data.length - at));
      at += step;
      if (at < data.length) setTimeout(next, pauseMs);
      else fs.closeSync(fd);
    };
    next();`;
  const child = spawn(process.execPath, ['-e', script, path, String(parts), String(pauseMs)], { stdio: ['pipe', 'inherit', 'inherit'] });
  child.stdin.end(data);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(code).toBe(0);
}

const fileLines = (k: KbsyncChild, path: string): LogLine[] => logsOf(k).filter((l) => l.msg === 'file' && l.path === path);
const uploadsOf = (k: KbsyncChild, path: string): LogLine[] =>
  fileLines(k, path).filter((l) => l.action === 'upload' && l.outcome === 'done');

/** Writes a small file and waits until the daemon has uploaded it: every cycle before has ended. */
async function oneMoreCycle(ws: Workspace, k: KbsyncChild, name: string): Promise<void> {
  ws.write(name, `# ${name}\n`);
  await until(`${name} uploaded`, () => uploadsOf(k, name).length === 1, 60_000);
}

describe('kbsync watch and a file still being written', () => {
  it('a copy that pauses 5 s mid-file with its descriptor open is uploaded once, whole: the final sha and the credits of the whole', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    const k = await watching(ws);
    const before = await ds.balance();
    const data = content();

    await writeSlowly(join(ws.docs, 'big.txt'), data, 2, 5000);
    await until('big.txt uploaded', () => uploadsOf(k, 'big.txt').length > 0, 90_000);
    await oneMoreCycle(ws, k, 'after.md');
    k.child.kill('SIGTERM');
    await k.exited;

    const copies = (await ds.files()).filter((f) => f.name === 'big.txt');
    expect(copies.map((f) => f.sha256)).toEqual([sha256(data)]);
    expect(uploadsOf(k, 'big.txt')).toHaveLength(1);
    expect(uploadsOf(k, 'big.txt')[0]).toMatchObject({ credits: 12 });
    // While it was written the file was held back, saying why.
    expect(fileLines(k, 'big.txt').some((l) => l.action === 'defer:changing' && /still being written/.test(String(l.reason)))).toBe(true);
    expect(before - (await ds.balance())).toBe(12 + 5);
  }, 180_000);

  it('a steady copy (12 writes a quarter second apart, one descriptor) is still one upload', async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    const k = await watching(ws);
    const before = await ds.balance();
    const data = content();

    await writeSlowly(join(ws.docs, 'steady.txt'), data, 12, 250);
    await until('steady.txt uploaded', () => uploadsOf(k, 'steady.txt').length > 0, 90_000);
    await oneMoreCycle(ws, k, 'after.md');
    k.child.kill('SIGTERM');
    await k.exited;

    expect((await ds.files()).filter((f) => f.name === 'steady.txt').map((f) => f.sha256)).toEqual([sha256(data)]);
    expect(uploadsOf(k, 'steady.txt')).toHaveLength(1);
    expect(before - (await ds.balance())).toBe(12 + 5);
  }, 180_000);

  it("an editor's save, new or in place and larger, is uploaded by the first cycle that sees it: never held back", async () => {
    const ds = suite.svc.dataset();
    const ws = workspace(ds);
    ws.write('notes.md', '# Notes\n');
    const k = await watching(ws);

    writeFileSync(join(ws.docs, 'new.md'), '# New\n\nWritten at once, as an editor saves.\n');
    await until('new.md uploaded', () => uploadsOf(k, 'new.md').length === 1, 60_000);
    writeFileSync(join(ws.docs, 'notes.md'), `# Notes\n\n${'A longer second version, saved in place. '.repeat(200)}\n`);
    await until('notes.md uploaded again', () => uploadsOf(k, 'notes.md').length === 2, 60_000);
    k.child.kill('SIGTERM');
    await k.exited;

    for (const path of ['new.md', 'notes.md'])
      expect(
        fileLines(k, path).filter((l) => l.action !== 'upload'),
        path,
      ).toEqual([]);
  }, 120_000);
});
