import { createHash } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, mkdtempSync, openSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';
import { hashFileSync } from '../../../src/sync/sources/hash-file.js';

describe('mtimeNsOf', () => {
  let dir = '';
  let path = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kbsync-fingerprint-'));
    path = join(dir, 'a.md');
    writeFileSync(path, 'hello');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the same time through lstat, stat and fstat: the one the hasher checks against', () => {
    const fd = openSync(path, 'r');
    const viaFd = mtimeNsOf(fstatSync(fd));
    closeSync(fd);

    expect(mtimeNsOf(lstatSync(path))).toBe(viaFd);
    expect(mtimeNsOf(statSync(path))).toBe(viaFd);
    expect(viaFd).toMatch(/^\d+$/);
    const file = { absPath: path, size: 5, mtimeNs: viaFd, inode: statSync(path).ino };
    expect(hashFileSync(file, new Uint8Array(4))).toEqual({ sha256: createHash('sha256').update('hello').digest('hex') });
  });

  it('tells apart times a fraction of a millisecond apart (the hasher then defers the file)', () => {
    utimesSync(path, 1_718_000_000.1234, 1_718_000_000.1234);
    const before = mtimeNsOf(lstatSync(path));
    utimesSync(path, 1_718_000_000.1236, 1_718_000_000.1236);

    expect(mtimeNsOf(lstatSync(path))).not.toBe(before);
    expect(hashFileSync({ absPath: path, size: 5, mtimeNs: before, inode: statSync(path).ino }, new Uint8Array(4))).toEqual({
      deferred: 'changed since the scan',
    });
  });
});
