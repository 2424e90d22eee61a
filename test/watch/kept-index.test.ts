import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openState } from '../../src/sync/state/index.js';
import type { TrackedFileInput } from '../../src/sync/state/sqlite/tracked.js';
import type { PlanItem, TrackedFile } from '../../src/sync/types.js';
import { refreshKeptIndex } from '../../src/watch/kept-index.js';

const row = (path: string, sha = 'a'): TrackedFileInput => ({
  source: 'docs',
  path,
  size: 1,
  mtimeNs: '1',
  inode: 1,
  sha256: sha.repeat(64),
  remoteName: path,
  remoteId: `id-${path}`,
  remoteStatus: 'processed',
  reprocessAttempts: 0,
  lastAction: 'upload',
  lastReason: 'new file',
});
const item = (path: string, action: PlanItem['action'], o: Partial<PlanItem> = {}): PlanItem => ({
  source: 'docs',
  path,
  action,
  reason: '',
  credits: 0,
  size: 1,
  sha256: null,
  remoteName: path,
  remoteId: null,
  wasTracked: false,
  ...o,
});
const strip = (files: Iterable<TrackedFile>) => [...files].map(({ updatedAt: _, ...f }) => f);

describe('the tracked index a daemon keeps between cycles', () => {
  it('after a cycle, holds what a fresh read of the state holds: uploads, a rename (both paths), a delete; untracked skips are not read', async () => {
    const state = openState(join(mkdtempSync(join(tmpdir(), 'kbsync-kept-')), 'state.db'));
    try {
      for (const p of ['a.md', 'b.md', 'old.md']) state.upsertTracked(row(p));
      const index = await state.loadTrackedFilesSoon();
      index.loadDetails();
      // What a cycle wrote: a new file, an edit, a rename, a delete.
      state.upsertTracked(row('new.md', 'b'));
      state.upsertTracked(row('a.md', 'c'));
      state.upsertTracked(row('moved.md'));
      state.removeTracked('docs', 'old.md');
      state.markDeleted('docs', 'b.md');
      const ok = refreshKeptIndex(
        index,
        [
          item('new.md', 'upload'),
          item('a.md', 'upload', { wasTracked: true }),
          item('moved.md', 'rename', { renamedFrom: { source: 'docs', path: 'old.md' } }),
          item('b.md', 'deleted', { wasTracked: true }),
          item('pic.png', 'skip:unsupported'),
        ],
        state,
      );
      expect(ok).toBe(true);
      expect(strip(index.values())).toEqual(strip((await state.loadTrackedFilesSoon()).values()));
    } finally {
      state.close();
    }
  });

  it('says to read it whole when a cycle inserted too many rows into a large index to splice them in', async () => {
    const state = openState(join(mkdtempSync(join(tmpdir(), 'kbsync-kept-')), 'state.db'));
    try {
      state.upsertTrackedMany(Array.from({ length: 100_000 }, (_, i) => row(`f/${String(i).padStart(6, '0')}.md`)));
      const index = await state.loadTrackedFilesSoon();
      index.loadDetails();
      const fresh = Array.from({ length: 101 }, (_, i) => `new/${i}.md`);
      for (const p of fresh) state.upsertTracked(row(p, 'd'));
      expect(
        refreshKeptIndex(
          index,
          fresh.map((p) => item(p, 'upload')),
          state,
        ),
      ).toBe(false);
      expect(
        refreshKeptIndex(
          index,
          fresh.slice(0, 99).map((p) => item(p, 'upload')),
          state,
        ),
      ).toBe(true);
      expect(index.size).toBe(100_099);
    } finally {
      state.close();
    }
  });
});
