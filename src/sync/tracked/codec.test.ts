import { describe, expect, it } from 'vitest';
import { blobToSha, decodeRemoteName, encodeRemoteName, mtimeToBind, shaToBlob, toRemoteStatus } from './codec.js';

describe('codec', () => {
  it('stores a SHA-256 as 32 bytes and reads it back lowercase', () => {
    const hex = 'AB'.repeat(32);

    const blob = shaToBlob(hex);

    expect(blob.length).toBe(32);
    expect(blobToSha(blob)).toBe('ab'.repeat(32));
  });

  it.each(['', 'abc', 'zz'.repeat(32), 'ab'.repeat(33)])('rejects %j as a SHA-256', (bad) => {
    expect(() => shaToBlob(bad)).toThrow(RangeError);
  });

  it.each([
    ['docs', 'a/b.md', 'a/b.md', null],
    ['docs', 'a/b.md', 'docs/a/b.md', '/'],
    ['docs', 'a/b.md', 'elsewhere/b.md', 'elsewhere/b.md'],
    ['docs', 'a/b.md', 'docsa/b.md', 'docsa/b.md'],
  ])('stores remote name of %s/%s named %s as %j', (source, path, name, stored) => {
    expect(encodeRemoteName(source, path, name)).toBe(stored);
  });

  it('round-trips every remote name form', () => {
    for (const [source, path, name] of [
      ['docs', 'a.md', 'a.md'],
      ['docs', 'a.md', 'docs/a.md'],
      ['docs', 'a.md', 'other/a.md'],
      ['d', 'x/y.md', 'd/x/y.md'],
    ] as const) {
      expect(decodeRemoteName(source, path, encodeRemoteName(source, path, name))).toBe(name);
    }
  });

  it.each([
    ['processed', 'processed'],
    ['queued', 'queued'],
    ['failed', 'failed'],
    ['indexing', 'unknown'],
    ['', 'unknown'],
  ])('maps service status %j to %j', (input, expected) => {
    expect(toRemoteStatus(input)).toBe(expected);
  });

  it('keeps nanosecond mtimes exact and rejects non-integers', () => {
    expect(mtimeToBind('1718000000123456789')).toBe(1718000000123456789n);
    expect(() => mtimeToBind('1.5')).toThrow(RangeError);
  });
});
