import { describe, expect, it } from 'vitest';
import type { ScanResult } from './folder.js';
import { packScan, unpackScan } from './scan-codec.js';

const file = (path: string, o: { absPath?: string; size?: number; mtimeNs?: string; inode?: number } = {}) => ({
  source: 'docs',
  path,
  absPath: o.absPath ?? `/data/docs/${path}`,
  size: o.size ?? 10,
  mtimeNs: o.mtimeNs ?? '1718000000123456789',
  inode: o.inode ?? 42,
});

describe('packScan / unpackScan', () => {
  it('round-trips files (odd characters, big numbers, a followed link) and skip entries', () => {
    const scan: ScanResult = {
      files: [
        file('a,b.md', { size: 0 }),
        file('new\nline/ü é.md', { size: 2 ** 40, mtimeNs: '-1', inode: 2 ** 50 }),
        file('linked/real.md', { absPath: '/data/docs/elsewhere/real.md' }),
      ],
      skipped: [{ source: 'docs', path: 'logo.png', reason: 'unsupported', detail: '.png files are not a supported type', size: 5 }],
    };

    const back = unpackScan(structuredClone(packScan('docs', '/data/docs', scan)));

    expect(back.files).toEqual(scan.files.map((f) => ({ ...f, sha256: null })));
    expect(back.skipped).toEqual(scan.skipped);
  });

  it('round-trips an empty walk', () => {
    const back = unpackScan(packScan('docs', '/data/docs', { files: [], skipped: [] }));

    expect(back).toEqual({ files: [], skipped: [] });
  });

  it('sends absolute paths only for files not at root/path', () => {
    const packed = packScan('docs', '/data/docs', { files: [file('a.md'), file('b.md', { absPath: '/data/docs/real/b.md' })], skipped: [] });

    expect(packed.absPaths).toEqual([[1, '/data/docs/real/b.md']]);
  });
});
