import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isKbsyncError } from '../../shared/errors.js';
import { scanFolder, type FolderSourceSpec } from './folder.js';
import { startFolderWalks } from './folder-walks.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'kbsync-walks-'));
  dirs.push(root);
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'a.md'), '# a');
  writeFileSync(join(root, 'sub', 'b.txt'), 'b');
  writeFileSync(join(root, 'logo.png'), 'png');
  return root;
}

const spec = (name: string, root: string): FolderSourceSpec => ({ name, root, include: ['**/*'], exclude: [], followSymlinks: false });

describe('startFolderWalks', () => {
  it('in process: walks a source when its result is asked for, as scanFolder does', async () => {
    const root = tree();
    const walks = startFolderWalks([spec('docs', root)], 'in-process');

    const result = await walks.result('docs');

    expect(result).toEqual(scanFolder(spec('docs', root)));
    expect(walks.result('other')).toBeUndefined();
  });

  it('in process: a missing root rejects with source_unavailable', async () => {
    const walks = startFolderWalks([spec('gone', join(tmpdir(), 'kbsync-no-such-folder-for-walks'))], 'in-process');

    const err = await walks.result('gone')?.catch((e: unknown) => e);

    expect(isKbsyncError(err, 'source_unavailable')).toBe(true);
  });

  it('a worker that cannot start (here: TypeScript sources) leaves the walks to this thread, same results', async () => {
    const a = tree();
    const b = tree();
    const walks = startFolderWalks([spec('a', a), spec('b', b)], 'worker');

    const [ra, rb] = await Promise.all([walks.result('a'), walks.result('b')]);

    expect(ra).toEqual(scanFolder(spec('a', a)));
    expect(rb).toEqual(scanFolder(spec('b', b)));
    walks.cancel();
  });

  it('cancel drops walks nobody collected, without an unhandled rejection', async () => {
    const walks = startFolderWalks([spec('docs', tree())], 'worker');

    walks.cancel();
    walks.cancel();

    await expect(walks.result('docs')).rejects.toThrow('cancelled');
  });
});
