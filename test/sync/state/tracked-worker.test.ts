import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type * as StateModule from '../../../src/sync/state/index.js';
import type * as LoadModule from '../../../src/sync/state/sqlite/load.js';
import type { TrackedFileInput } from '../../../src/sync/state/index.js';
import { REPO_ROOT } from '../../helpers/build-dist.js';
import { shaOf } from './fixtures/realistic.js';

// The worker runs compiled JavaScript only: load the modules from dist/ (built by the global setup),
// as bin/kbsync.js does, so that the read really happens in a worker thread.
const dist = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(REPO_ROOT, 'dist', path)).href)) as T;

const file = (source: string, path: string, over: Partial<TrackedFileInput> = {}): TrackedFileInput => ({
  source,
  path,
  size: 10,
  mtimeNs: '1718000000123456789',
  inode: 7,
  sha256: shaOf(path),
  remoteName: path,
  remoteId: `r-${path}`,
  remoteStatus: 'processed',
  reprocessAttempts: 0,
  lastAction: 'upload',
  lastReason: 'new file',
  ...over,
});

describe('tracked files read in a worker thread (compiled)', () => {
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-tracked-worker-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('loadTrackedFilesSoon gives what loadTrackedFiles gives, several sources, a NUL inside a value included', async () => {
    const { openState } = await dist<typeof StateModule>('sync/state/index.js');
    const { readBulkInWorker } = await dist<typeof LoadModule>('sync/state/sqlite/load.js');
    const state = openState(join(tempDir(), 'state.db'));
    try {
      state.upsertTrackedMany([
        file('docs', 'b.md'),
        file('docs', 'a/é.md', { remoteId: null, remoteStatus: null, lastReason: null }),
        file('wiki', 'x.md', { remoteName: 'wiki/x.md' }),
        file('notes', 'n.md', { remoteId: 'id\0nul' }),
      ]);

      const soon = await state.loadTrackedFilesSoon();
      const bulk = await readBulkInWorker(state.path);

      expect([...soon.values()]).toEqual([...state.loadTrackedFiles().values()]);
      expect([...soon.values()].map((f) => `${f.source}:${f.path}`)).toEqual(['docs:a/é.md', 'docs:b.md', 'notes:n.md', 'wiki:x.md']);
      expect(bulk?.size).toBe(3); // read by the worker: one row per source
    } finally {
      state.close();
    }
  });

  it('a state large enough for the worker (more than WORKER_MIN_STATE_BYTES, 3+ cores) loads the same, through it where it runs', async () => {
    const { openState } = await dist<typeof StateModule>('sync/state/index.js');
    const { WORKER_MIN_STATE_BYTES, worthAWorker } = await dist<typeof LoadModule>('sync/state/sqlite/load.js');
    const path = join(tempDir(), 'state.db');
    const state = openState(path);
    try {
      const files = Array.from({ length: 40_000 }, (_, i) =>
        file(i % 2 === 0 ? 'docs' : 'wiki', `area-${i % 13}/topic-${i % 7}/document-number-${i}.md`),
      );
      state.upsertTrackedMany(files);
      const bytes = state.diagnostics().pageCount * state.diagnostics().pageSize;
      expect(worthAWorker(bytes, 4), `${bytes} bytes`).toBe(true);
      expect(worthAWorker(WORKER_MIN_STATE_BYTES - 1, 4)).toBe(false);
      expect(worthAWorker(bytes, 2)).toBe(false); // the walk and its lstat helper already take both cores

      const soon = await state.loadTrackedFilesSoon();

      expect(soon.size).toBe(40_000);
      expect([...soon.values()]).toEqual([...state.loadTrackedFiles().values()]);
    } finally {
      state.close();
    }
  }, 60_000);

  it('a worker that cannot read the database resolves null (the caller reads in-process, where errors get their code)', async () => {
    const { readBulkInWorker } = await dist<typeof LoadModule>('sync/state/sqlite/load.js');
    const dir = tempDir();
    writeFileSync(join(dir, 'junk.db'), 'this is not a database'.repeat(100));

    expect(await readBulkInWorker(join(dir, 'missing.db'))).toBeNull();
    expect(await readBulkInWorker(join(dir, 'junk.db'))).toBeNull();
  });

  it('a damaged files table still fails loadTrackedFilesSoon with state_corrupt', async () => {
    const { openState } = await dist<typeof StateModule>('sync/state/index.js');
    const path = join(tempDir(), 'state.db');
    const state = openState(path);
    state.upsertTrackedMany(Array.from({ length: 200 }, (_, i) => file('docs', `f${i}.md`)));
    state.close();
    // Overwrite the pages after the first: the file stays a SQLite file whose tables are garbage.
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(4096 * 3, 0xab), 0, 4096 * 3, 4096);
    closeSync(fd);
    // The header is intact, so the state opens; the files table's pages are garbage.
    const reopened = openState(path);
    try {
      await expect(reopened.loadTrackedFilesSoon()).rejects.toMatchObject({ code: 'state_corrupt' });
    } finally {
      reopened.close();
    }
  });
});
