import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scanFolder, type ScanResult } from '../../../src/sync/sources/folder.js';
import { testdir } from './helpers.js';

// Root reads through any permission, so as root the walk runs with the effective uid of "nobody"
// (this file runs in its own process; the uid is restored after each test).
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

function scanUnprivileged(root: string): ScanResult {
  if (asRoot) process.seteuid?.(NOBODY);
  try {
    return scanFolder({ name: 'docs', root, include: ['**/*'], exclude: [], followSymlinks: false });
  } finally {
    if (asRoot) process.seteuid?.(0);
  }
}

const restore: string[] = [];
afterEach(() => {
  for (const p of restore.splice(0)) chmodSync(p, 0o755);
});

function lockedTree(entries: Record<string, string>, locked: Record<string, number>): string {
  const root = testdir(entries);
  chmodSync(root, 0o755);
  for (const [path, mode] of Object.entries(locked)) {
    chmodSync(join(root, path), mode);
    restore.push(join(root, path));
  }
  return root;
}

describe('scanFolder with unreadable folders', () => {
  it('lists an unreadable folder as skipped with the error, and walks on', () => {
    const root = lockedTree({ 'open/a.md': '', 'closed/b.md': '', 'z.md': '' }, { open: 0o755, closed: 0o000 });

    const result = scanUnprivileged(root);

    expect(result.files.map((f) => f.path).sort()).toEqual(['open/a.md', 'z.md']);
    expect(result.skipped).toEqual([
      { source: 'docs', path: 'closed', reason: 'unreadable', detail: expect.stringContaining('EACCES'), size: null },
    ]);
  });

  it('skips a folder whose ignore file cannot be read, rather than upload what it may exclude', () => {
    const root = lockedTree(
      { 'sub/.gitignore': 'private.md\n', 'sub/private.md': '', 'sub/public.md': '', 'top.md': '' },
      { sub: 0o755, 'sub/.gitignore': 0o000 },
    );

    const result = scanUnprivileged(root);

    expect(result.files.map((f) => f.path)).toEqual(['top.md']);
    expect(result.skipped).toEqual([
      { source: 'docs', path: 'sub', reason: 'unreadable', detail: expect.stringContaining('EACCES'), size: null },
    ]);
  });

  it('lists an unreadable source root as "." rather than failing', () => {
    const root = lockedTree({ 'a.md': '' }, { '.': 0o000 });

    const result = scanUnprivileged(root);

    expect(result).toEqual({
      files: [],
      inPathOrder: true,
      skipped: [{ source: 'docs', path: '.', reason: 'unreadable', detail: expect.stringContaining('EACCES'), size: null }],
    });
  });
});
