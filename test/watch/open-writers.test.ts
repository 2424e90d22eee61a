import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWriters } from '../../src/watch/open-writers.js';

/* The /proc scan that tells a file still being written, against a real process holding real descriptors. */

const dirs: string[] = [];
const kids: ChildProcess[] = [];
afterEach(() => {
  for (const k of kids.splice(0)) k.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A child that opens each path with its flags, says so, and holds them until killed. */
async function holding(opens: [string, string][]): Promise<ChildProcess> {
  const script = `
    const fs = require('node:fs');
    for (const [path, flags] of JSON.parse(process.argv[1])) fs.openSync(path, flags);
    process.stdout.write('open\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script, JSON.stringify(opens)], { stdio: ['ignore', 'pipe', 'inherit'] });
  kids.push(child);
  await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
  return child;
}

describe.runIf(process.platform === 'linux')('openWriters (Linux /proc)', () => {
  it('finds the process that holds a file open to write (write, append, read-write), not one that only reads it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-writers-'));
    dirs.push(dir);
    const names = ['w.txt', 'a.txt', 'rw.txt', 'r.txt', 'closed.txt'];
    for (const n of names) writeFileSync(join(dir, n), 'x');
    const child = await holding([
      [join(dir, 'w.txt'), 'w'],
      [join(dir, 'a.txt'), 'a'],
      [join(dir, 'rw.txt'), 'r+'],
      [join(dir, 'r.txt'), 'r'],
    ]);
    const files = names.map((n) => ({ key: n, absPath: join(dir, n), inode: statSync(join(dir, n)).ino }));

    const found = openWriters(files);

    expect([...(found ?? new Map()).keys()].sort()).toEqual(['a.txt', 'rw.txt', 'w.txt']);
    expect(found?.get('w.txt')).toEqual({ pid: child.pid, command: 'node' });
  });

  it('tells a file by its inode: another file of the same name held open elsewhere is not it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-writers-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'notes.md'), 'x');
    const other = mkdtempSync(join(tmpdir(), 'kbsync-writers-other-'));
    dirs.push(other);
    writeFileSync(join(other, 'notes.md'), 'y');
    await holding([[join(other, 'notes.md'), 'w']]);

    expect(openWriters([{ key: 'notes', absPath: join(dir, 'notes.md'), inode: statSync(join(dir, 'notes.md')).ino }])).toEqual(new Map());
  });
});

describe('openWriters elsewhere', () => {
  it('says it cannot tell (null) where there is no /proc table of descriptors', () => {
    expect(openWriters([{ key: 'x', absPath: '/x', inode: 1 }], { procDir: join(tmpdir(), 'kbsync-no-such-proc') })).toBeNull();
  });
});
