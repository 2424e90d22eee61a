import { describe, expect, it } from 'vitest';
import { MIB } from '../../shared/plans.js';
import { formatBytes, formatBytesPair, formatCount, shortSha } from './format.js';

describe('format', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [1990, '1,990'],
    [20_000, '20,000'],
    [1_234_567, '1,234,567'],
    [-1500, '-1,500'],
  ])('formatCount(%i) = %s', (n, text) => {
    expect(formatCount(n)).toBe(text);
  });

  it.each([
    [1, '1 byte'],
    [512, '512 bytes'],
    [12_800, '12.5 KB'],
    [100 * MIB, '100 MB'],
    [120 * MIB + 314_573, '120.3 MB'],
    [3 * 1024 * MIB, '3 GB'],
  ])('formatBytes(%i) = %s', (n, text) => {
    expect(formatBytes(n)).toBe(text);
  });

  it('shows exact bytes when rounding would make a file just over a limit look equal to it', () => {
    expect(formatBytesPair(100 * MIB + 1, 100 * MIB)).toEqual(['104,857,601 bytes', '104,857,600 bytes']);
    expect(formatBytesPair(120 * MIB, 100 * MIB)).toEqual(['120 MB', '100 MB']);
  });

  it('shortens a sha256 to 8 hex digits', () => {
    expect(shortSha('ab12cd34ef56')).toBe('ab12cd34');
  });
});
