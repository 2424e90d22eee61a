import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type * as FolderModule from '../../../src/sync/sources/folder.js';
import type * as WalksModule from '../../../src/sync/sources/folder-walks.js';
import { REPO_ROOT } from '../../helpers/build-dist.js';
import { tempDir, testdir } from './helpers.js';

// The worker runs compiled JavaScript only: load the modules from dist/ (built by the global setup),
// as bin/kbsync.js does, so that this thread really hands the walk to a worker thread.
const dist = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(REPO_ROOT, 'dist', path)).href)) as T;
const spec = (name: string, root: string, followSymlinks = false) => ({ name, root, include: ['**/*'], exclude: ['drafts/**'], followSymlinks });

describe('folder walks in a worker thread (compiled)', () => {
  it('give what a walk on this thread gives: files, followed links, skip entries with their reasons', async () => {
    const { startFolderWalks } = await dist<typeof WalksModule>('sync/sources/folder-walks.js');
    const { scanFolder } = await dist<typeof FolderModule>('sync/sources/folder.js');
    const root = testdir({
      'a.md': '# a', 'sub/b.txt': 'b', 'logo.png': 'png', '.env': 'X=1', 'drafts/c.md': 'c', 'node_modules/x.md': 'x',
      '.gitignore': 'ignored.md\n', 'ignored.md': 'i', 'real/d.md': 'd', 'link': { symlink: 'real' },
    });
    const other = testdir({ 'z.md': 'z' });

    const walks = startFolderWalks([spec('docs', root, true), spec('more', other)], 'worker');
    const [docs, more] = await Promise.all([walks.result('docs'), walks.result('more')]);

    // Unpacked files already carry the sha256 field the observer fills in.
    const here = (r: FolderModule.ScanResult) => ({ ...r, files: r.files.map((f) => ({ ...f, sha256: null })) });
    expect(docs).toEqual(here(scanFolder(spec('docs', root, true))));
    expect(more).toEqual(here(scanFolder(spec('more', other))));
    expect(docs?.files.find((f) => f.path === 'link/d.md')?.absPath).toBe(join(root, 'real', 'd.md'));
    expect(Object.fromEntries(docs?.skipped.map((s) => [s.path, s.reason]) ?? [])).toEqual({
      '.env': 'secret', '.gitignore': 'unsupported', drafts: 'ignored', 'ignored.md': 'ignored', 'logo.png': 'unsupported', node_modules: 'ignored',
    });
  });

  it('report a walk that fails with its error code (a missing root: source_unavailable)', async () => {
    const { startFolderWalks } = await dist<typeof WalksModule>('sync/sources/folder-walks.js');
    const missing = join(tempDir(), 'gone');

    const err = await startFolderWalks([spec('gone', missing)], 'worker').result('gone')?.catch((e: unknown) => e);

    // dist's KbsyncError class, not src's: compare by name and code.
    expect(err).toMatchObject({ name: 'KbsyncError', code: 'source_unavailable' });
  });
});
