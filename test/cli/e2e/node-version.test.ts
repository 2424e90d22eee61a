import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureDist, KBSYNC_BIN } from '../../helpers/build-dist.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const AS_NODE_20 = fileURLToPath(new URL('../../fixtures/preload/node-20.cjs', import.meta.url));

describe('the Node.js floor', () => {
  beforeAll(() => ensureDist(), 120_000);

  it('package.json engines, the bin check and the Node the scripts run under agree', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string } };
    const bin = readFileSync(KBSYNC_BIN, 'utf8');
    expect(pkg.engines.node).toBe('>=22');
    expect(bin).toMatch(/const NODE_FLOOR = 22;/);
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
  });

  it('an older Node is refused before anything loads, with what to do and exit 2', () => {
    const r = spawnSync(process.execPath, ['--require', AS_NODE_20, KBSYNC_BIN, 'plan'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/needs Node\.js 22 or later, and this is Node\.js 20\.19\.0/);
    expect(r.stderr).toMatch(/Install Node\.js 22 or 24/);
    expect(r.stdout).toBe('');
  });

  it('the same bin on this Node runs', () => {
    const r = spawnSync(process.execPath, [KBSYNC_BIN, '--version'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
