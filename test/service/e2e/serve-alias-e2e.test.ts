import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { datasetApi } from '../../helpers/e2e-service.js';
import { createTempDirs, createWorkspace, pathsWith } from '../../helpers/e2e-workspace.js';
import { spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { eventually } from '../helpers.js';

/**
 * A client of the hosted service that calls `/api/platform/ext/...` (docs/api.md's quirk) works
 * against `kbsync serve` with only its host changed: kbsync's own client, configured with that
 * dialect, syncs a folder to a real `kbsync serve` process and plans it again as unchanged.
 */

const dirs = createTempDirs();
let serve: KbsyncChild;
let url = '';
let apiKey = '';

beforeAll(async () => {
  await ensureDist();
  serve = spawnKbsync(['serve', '--port', '0', '--data', dirs.make('kbsync-alias-serve-')], dirs.make('kbsync-alias-cwd-'));
  let stdout = '';
  serve.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  await eventually(async () => (/api key: \S+/.test(stdout) ? true : undefined), 20_000);
  url = /^listening on (\S+)$/m.exec(stdout)?.[1] ?? '';
  apiKey = /api key: (\S+)/.exec(stdout)?.[1] ?? '';
}, 120_000);

afterAll(async () => {
  serve.child.kill('SIGTERM');
  await serve.exited;
  dirs.cleanup();
});

describe('kbsync with dialect.v1Prefix /api/platform/ext against kbsync serve', () => {
  it('syncs a folder (every v1 call under the alias), then plans it as unchanged', async () => {
    const ws = createWorkspace(dirs.make('kbsync-alias-ws-'), {
      baseUrl: url,
      apiKey,
      config: { target: { kind: 'remote', baseUrl: url, apiKey, plan: 'basic', dialect: { v1Prefix: '/api/platform/ext' } } },
    });
    ws.write('guide.md', '# Guide\n\nHow the alias prefix reaches the local service.\n');
    ws.write('notes/data.csv', 'name,value\nalpha,1\nbeta,2\n');

    const sync = await ws.runJson('sync');
    const plan = await ws.runJson('plan');
    const files = await datasetApi(url, '1', apiKey).files();

    expect(sync.code, sync.stderr).toBe(0);
    expect(pathsWith(sync.report, 'upload')).toEqual(['guide.md', 'notes/data.csv']);
    expect(sync.report.summary.failed).toBe(0);
    expect(files.map((f) => f.name).sort()).toEqual(['guide.md', 'notes/data.csv']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(pathsWith(plan.report, 'skip:unchanged')).toEqual(['guide.md', 'notes/data.csv']);
  });
});
