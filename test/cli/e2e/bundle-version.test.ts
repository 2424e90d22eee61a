import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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
    // Written in when built (in whichever chunk holds it): the bundle does not read package.json at start-up.
    const bundle = join(REPO_ROOT, 'dist', 'bundle');
    const chunks = readdirSync(bundle).filter((f) => f.endsWith('.js'));
    expect(chunks.filter((f) => readFileSync(join(bundle, f), 'utf8').includes(`return ${JSON.stringify(version)};`))).toHaveLength(1);
  });
});
