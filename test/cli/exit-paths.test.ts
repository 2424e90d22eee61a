import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as Prepare from '../../src/sync/executor/prepare.js';
import { runKbsync } from '../helpers/e2e-workspace.js';

// A bug anywhere in a command (here: planning throws a TypeError) must end as exit 5, not a crash.
const bug = vi.hoisted(() => ({ armed: false }));
vi.mock('../../src/sync/executor/prepare.js', async (importOriginal) => {
  const real = await importOriginal<typeof Prepare>();
  return {
    ...real,
    preparePlan: (...args: Parameters<typeof real.preparePlan>) => {
      if (bug.armed) throw new TypeError("Cannot read properties of undefined (reading 'sha256')");
      return real.preparePlan(...args);
    },
  };
});

const dirs: string[] = [];
afterEach(() => {
  bug.armed = false;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder with docs/a.md and a kbsync.yaml for the embedded service with the given `state` line. */
function workspace(state: string): string {
  const root = mkdtempSync(join(tmpdir(), 'kbsync-exit-'));
  dirs.push(root);
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'docs', 'a.md'), '# A\n');
  writeFileSync(join(root, 'kbsync.yaml'), `target: { kind: embedded }\nstate: ${state}\nsources:\n  - name: docs\n    path: ./docs\n`);
  return root;
}

describe('exit codes the CLI gives for what is not a per-file outcome', () => {
  it('2 with the field and what to do when `state` names a folder or lies under a file', async () => {
    const folder = workspace('./here');
    mkdirSync(join(folder, 'here'));
    const underFile = workspace('./docs/a.md/state.db');

    const a = await runKbsync(['plan'], folder);
    const b = await runKbsync(['sync', '--json'], underFile);

    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`kbsync: state: cannot use ${join(folder, 'here')} as the state database: it is a folder, not a file`);
    expect(a.stderr).toContain('Point `state` at a file path');
    expect(b.code).toBe(2);
    expect(JSON.parse(b.stdout)).toMatchObject({ error: { code: 'state_unavailable', exitCode: 2 } });
    expect(b.stdout).toContain('a part of it is a file, not a folder');
  });

  it('5 for a bug, with a short message and no stack; one JSON error document with --json', async () => {
    const root = workspace('./.kbsync/state.db');
    bug.armed = true;

    const text = await runKbsync(['plan'], root);
    const json = await runKbsync(['plan', '--json'], root);

    expect(text.code).toBe(5);
    expect(text.stderr).toContain("kbsync: internal error: Cannot read properties of undefined (reading 'sha256')");
    expect(text.stderr).toContain('please report it');
    expect(text.stderr).not.toContain('    at ');
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code: 'internal_error', exitCode: 5, message: expect.stringContaining('reading') },
    });
  });
});
