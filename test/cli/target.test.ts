import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTarget } from '../../src/cli/target.js';
import { loadConfig } from '../../src/config/load.js';
import { startEmbeddedService } from '../../src/service/embedded.js';
import { silentLogger } from '../../src/shared/logger.js';
import { runCli, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();

describe('openTarget', () => {
  it('embedded: starts the local service under dataDir with the configured plan and returns a client for its dataset', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'kbsync.yaml'), 'target:\n  kind: embedded\n  plan: pro\n  dataDir: data\n');

    const target = await openTarget(loadConfig(join(dir, 'kbsync.yaml'), {}), silentLogger());
    try {
      const dataset = await target.client.getDataset();

      expect(target.datasetId).toBe(dataset.id);
      expect(dataset.plan).toBe('pro');
      expect(existsSync(join(dir, 'data', 'service.db'))).toBe(true);
    } finally {
      await target.close();
    }
  });

  it('remote: a client on baseUrl with the key from apiKeyFile and the configured datasetId', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'svc'));
    const service = await startEmbeddedService({ dataDir: join(dir, 'svc'), plan: 'basic', logger: silentLogger() });
    try {
      writeFileSync(join(dir, 'key'), `${service.apiKey}\n`, { mode: 0o600 });
      writeFileSync(
        join(dir, 'kbsync.yaml'),
        `target:\n  kind: remote\n  baseUrl: ${service.baseUrl}\n  apiKeyFile: key\n  datasetId: "${service.datasetId}"\n`,
      );

      const target = await openTarget(loadConfig(join(dir, 'kbsync.yaml'), {}), silentLogger());
      try {
        expect(target.datasetId).toBe(service.datasetId);
        expect((await target.client.getDataset()).id).toBe(service.datasetId);
      } finally {
        await target.close();
      }
    } finally {
      await service.close();
    }
  });

  it('remote: a wrong key is refused by the service as unauthorized', async () => {
    const dir = tempDir();
    const service = await startEmbeddedService({ dataDir: join(dir, 'svc'), plan: 'basic', logger: silentLogger() });
    try {
      writeFileSync(join(dir, 'kbsync.yaml'), `target:\n  kind: remote\n  baseUrl: ${service.baseUrl}\n  apiKey: not-the-key\n`);

      const target = await openTarget(loadConfig(join(dir, 'kbsync.yaml'), {}), silentLogger());
      try {
        await expect(target.client.getDataset()).rejects.toMatchObject({ code: 'unauthorized' });
      } finally {
        await target.close();
      }
    } finally {
      await service.close();
    }
  });
});

describe('a plan on a new state with the embedded target', () => {
  it('lists nothing and starts no service before its first sync; once synced, a lost state is rebuilt from the service', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'a.md'), '# A\n');
    writeFileSync(join(dir, 'docs', 'b.md'), '# B\n');
    const config = 'target:\n  kind: embedded\n  dataDir: data\nstate: state.db\nsources:\n  - name: docs\n    path: ./docs\n';
    writeFileSync(join(dir, 'kbsync.yaml'), config);

    const planned = await runCli(['plan', '--json'], { cwd: dir });
    expect(JSON.parse(planned.stdout).summary.uploaded).toBe(2);
    expect(existsSync(join(dir, 'data', 'service.db'))).toBe(false);

    expect((await runCli(['sync'], { cwd: dir })).code).toBe(0);
    rmSync(join(dir, 'state.db'));
    const rebuilt = await runCli(['plan', '--json'], { cwd: dir });

    expect(rebuilt.stderr).toContain('state rebuilt from the remote listing: 2 files matched');
    expect(JSON.parse(rebuilt.stdout).summary).toMatchObject({ uploaded: 0, unchanged: 2 });
  });
});
