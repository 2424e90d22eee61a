import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type ChildExit } from '../../helpers/kbsync-child.js';

/*
 * `kbsync explain PATH` with the path as the shell gives it: relative to the working folder (the config is
 * found upward from a subfolder) or absolute, for a source whose name is not its folder's name.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 300_000);

const CONFIG = `target: { kind: embedded, plan: basic, dataDir: .kbsync/service, startCredits: 100 }
state: .kbsync/state.db
sources:
  - name: handbook
    path: ./docs
`;

describe('kbsync explain PATH as a file-system path', () => {
  it('takes a path relative to the working folder or absolute, as it takes the source-relative one', async () => {
    const root = temp.make();
    writeFileSync(join(root, 'kbsync.yaml'), CONFIG);
    // HOME is the project's folder, so that the upward search for kbsync.yaml reaches it from a subfolder.
    const run = (cwd: string, ...args: string[]): Promise<ChildExit> => spawnKbsync(args, cwd, { HOME: root }).exited;
    mkdirSync(join(root, 'docs', 'guide'), { recursive: true });
    writeFileSync(join(root, 'docs', 'guide', 'setup.md'), '# Setup\n\nInstall it.\n');
    expect((await run(root, 'sync')).code).toBe(0);

    const asPlanned = await run(root, 'explain', 'guide/setup.md');
    expect(asPlanned.code).toBe(0);
    expect(asPlanned.stdout).toMatch(/decision: +skip:unchanged/);

    // From the subfolder, as the shell completes it; from the project root, the folder's own path; absolute.
    const sub = join(root, 'docs', 'guide');
    for (const [cwd, path] of [
      [sub, 'setup.md'],
      [sub, './setup.md'],
      [root, 'docs/guide/setup.md'],
      [root, join(sub, 'setup.md')],
    ] as const) {
      const r = await run(cwd, 'explain', path);
      expect({ path, code: r.code, stderr: r.stderr }).toEqual({ path, code: 0, stderr: '' });
      expect(r.stdout).toMatch(/decision: +skip:unchanged/);
    }

    // A path that is in no source still says so.
    const outside = await run(root, 'explain', 'kbsync.yaml');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('"kbsync.yaml" is not in any source');
  }, 120_000);
});
