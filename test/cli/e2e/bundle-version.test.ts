import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KBSYNC_BIN, REPO_ROOT, ensureDist } from '../../helpers/build-dist.js';

beforeAll(async () => {
  await ensureDist();
}, 120_000);

describe('bin/kbsync.js --version (the bundle, whose version is written in when it is built)', () => {
  it('prints the version in package.json', () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

    const run = spawnSync(process.execPath, [KBSYNC_BIN, '--version'], { cwd: REPO_ROOT, encoding: 'utf8' });

    expect({ status: run.status, stdout: run.stdout.trim(), stderr: run.stderr }).toEqual({ status: 0, stdout: version, stderr: '' });
    // Written in when built: the bundle does not read package.json at start-up.
    expect(readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'main.js'), 'utf8')).toContain(`return ${JSON.stringify(version)};`);
  });
});
