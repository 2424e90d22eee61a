import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist, REPO_ROOT } from '../../helpers/build-dist.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';

/*
 * `npx kbsync` in this checkout on a machine whose Node is 20: npm itself runs on that Node, finds
 * the checkout's own bin and links the checkout into its npx cache (on a first call, or with a
 * fresh cache), checking `engines` against its own Node; the carried Node 24 then runs kbsync. The
 * engine warning is npm's, not the user's problem, and is not printed. The run is npm's real CLI
 * with its process made to look like Node 20, and an npm cache of its own (every call a first).
 */
const AS_NODE_20 = fileURLToPath(new URL('../../fixtures/preload/npm-on-node-20.cjs', import.meta.url));
const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 120_000);

/** npm's npx entry (npx-cli.js), found on PATH as a user's shell would. */
function npxCli(): string {
  const found = spawnSync('sh', ['-c', 'command -v npx'], { encoding: 'utf8' }).stdout.trim();
  return realpathSync(found);
}

describe('npx kbsync on a machine whose Node is older than the floor', () => {
  it('runs kbsync under the carried Node with no EBADENGINE warning, on a first call too', () => {
    const home = temp.make('kbsync-npx-home-');
    const env = {
      PATH: [join(REPO_ROOT, 'node_modules', '.bin'), ...(process.env.PATH ?? '').split(delimiter)].join(delimiter),
      HOME: home,
      npm_config_cache: join(home, 'npm-cache'),
      npm_config_update_notifier: 'false',
    };
    for (const call of [1, 2]) {
      const r = spawnSync(process.execPath, ['--require', AS_NODE_20, npxCli(), 'kbsync', '--version'], {
        cwd: REPO_ROOT,
        env,
        encoding: 'utf8',
      });
      expect(r.status, `call ${call}: ${r.stderr}`).toBe(0);
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
      expect(r.stderr, `call ${call}`).not.toContain('EBADENGINE');
      expect(r.stderr, `call ${call}`).toBe('');
    }
  }, 120_000);
});
