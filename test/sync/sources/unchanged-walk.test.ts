import { lstatSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanFolder, type FolderSourceSpec, type ScanOptions } from '../../../src/sync/sources/folder.js';
import { mtimeNsOf } from '../../../src/sync/sources/fingerprint.js';
import { UnchangedRows } from '../../../src/sync/tracked/unchanged-rows.js';
import { TrackedIndex } from '../../../src/sync/tracked/tracked-index.js';
import type { RemoteStatus, TrackedFile } from '../../../src/sync/types.js';
import { tempDir, writeTree } from './helpers.js';

const FILES = 600;

/**
 * A tree of FILES Markdown files over a few folders and its tracked rows, as a daemon's kept index
 * holds them: most as the files are now (unchanged), and each other kind a full walk meets: a file
 * touched since, a row whose remote copy failed, a row never uploaded, a file not tracked, a row whose
 * file is gone, and a file of a type never synced.
 */
function trackedTree(): { spec: FolderSourceSpec; index: TrackedIndex; expectKept: string[]; unchanged: number } {
  const root = tempDir('kbsync-unchanged-');
  const entries: Record<string, string> = { 'img/logo.png': 'png' };
  for (let i = 0; i < FILES; i++) entries[`d${i % 9}/f${String(i).padStart(4, '0')}.md`] = `file ${i}`;
  writeTree(root, entries);
  const rows: TrackedFile[] = [];
  const expectKept: string[] = [];
  let unchanged = 0;
  const row = (path: string, remoteId: string | null, remoteStatus: RemoteStatus | null): TrackedFile => {
    const st = lstatSync(join(root, path));
    return {
      source: 'docs',
      path,
      size: st.size,
      mtimeNs: mtimeNsOf(st),
      inode: st.ino,
      sha256: 'a'.repeat(64),
      remoteName: path,
      remoteId,
      remoteStatus,
      reprocessAttempts: 0,
      remoteError: null,
      lastAction: 'upload',
      lastReason: 'new file',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
  };
  for (const path of Object.keys(entries).filter((p) => p.endsWith('.md'))) {
    const i = Number(/f(\d+)/.exec(path)?.[1]);
    if (i % 50 === 1) {
      expectKept.push(path); // not tracked
      continue;
    }
    const r = row(path, i % 50 === 2 ? null : String(i), i % 50 === 3 ? 'failed' : 'processed');
    rows.push(r);
    if (i % 50 === 4) {
      utimesSync(join(root, path), new Date(), new Date('2001-02-03T04:05:06Z')); // touched since
      expectKept.push(path);
    } else if (i % 50 === 2 || i % 50 === 3) expectKept.push(path);
    else unchanged++;
  }
  rows.push({ ...row('d0/f0000.md', 'gone', 'processed'), path: 'd0/gone.md' });
  rows.sort((a, b) => (a.path < b.path ? -1 : 1));
  return {
    spec: { name: 'docs', root, include: ['**/*'], exclude: [], followSymlinks: false },
    index: TrackedIndex.of(rows),
    expectKept: expectKept.sort(),
    unchanged,
  };
}

describe('a full walk with a kept index (ScanOptions.unchanged)', () => {
  const ways: [string, ScanOptions][] = [
    ['lstats shared with the helper thread', { statPool: { workerAfter: 64, helperGraceMs: 200 } }],
    ['lstats on this thread, as it walks', { statPool: false }],
  ];
  for (const [way, options] of ways) {
    it(`returns only the files that may have changed and marks every unchanged row (${way})`, () => {
      const { spec, index, expectKept, unchanged } = trackedTree();
      const walked = new UnchangedRows(index);
      const result = scanFolder(spec, { ...options, unchanged: walked });
      expect(result.files.map((f) => f.path)).toEqual(expectKept);
      expect(result.skipped.map((s) => [s.path, s.reason])).toEqual([['img/logo.png', 'unsupported']]);
      expect(walked.count).toBe(unchanged);
      expect(unchanged).toBeGreaterThan(FILES * 0.8);
      // Marked: exactly the rows of the files left out; not the gone row, nor those the walk returned.
      const marked = [...walked.seen.keys()].filter((r) => walked.seen[r] === 1).map((r) => index.fileAt(r).path);
      const all = [...index.values()].map((t) => t.path);
      expect(marked).toEqual(all.filter((p) => p !== 'd0/gone.md' && !expectKept.includes(p)));
      // The files returned carry their stat, as without the option.
      const plain = scanFolder(spec, options);
      const byPath = new Map(plain.files.map((f) => [f.path, f]));
      for (const f of result.files) expect(f).toEqual(byPath.get(f.path));
    });
  }

  it('drops nothing in a scoped walk (a cycle after events), where the delta compares what it found', () => {
    const { spec, index } = trackedTree();
    const walked = new UnchangedRows(index);
    const result = scanFolder(spec, { unchanged: walked, scope: [{ dir: 'd1', direct: true }] });
    expect(result.files.length).toBe(Math.ceil((FILES - 1) / 9));
    expect(walked.count).toBe(0);
  });

  it('counts a file once even if offered twice', () => {
    const { index } = trackedTree();
    const walked = new UnchangedRows(index);
    const file = index.fileAt(index.rowOf('docs', 'd0/f0000.md'));
    expect(walked.take('docs', file.path, file)).toBe(true);
    expect(walked.take('docs', file.path, file)).toBe(false);
    expect(walked.count).toBe(1);
  });
});
