import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from '../shared/logger.js';
import type { Plan } from '../shared/plans.js';
import { startService } from './server.js';

/** Credits of the dataset an embedded service creates on its first start, unless `credits` says otherwise. */
export const EMBEDDED_START_CREDITS = 1_000;
const KEY_FILE = 'embedded-key';

export type EmbeddedService = { baseUrl: string; apiKey: string; datasetId: string; close(): Promise<void> };

function readKeyFile(path: string): string | undefined {
  try {
    const key = readFileSync(path, 'utf8').trim();
    return key === '' ? undefined : key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Runs the local service in-process on 127.0.0.1 (random port) for `target.kind: embedded`.
 * The first start creates a dataset on `plan` with `credits` (1,000 by default) and keeps its key in
 * `dataDir/embedded-key` (0600); later starts reuse it, and the configured plan wins over the stored one.
 */
export async function startEmbeddedService(opts: {
  dataDir: string;
  plan: Plan;
  credits?: number;
  logger?: Logger;
  allowInsecureWebhooks?: boolean;
  llmUrl?: string;
  background?: boolean;
}): Promise<EmbeddedService> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const service = await startService({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logger: opts.logger,
    allowInsecureWebhooks: opts.allowInsecureWebhooks,
    llmUrl: opts.llmUrl,
    background: opts.background,
  });
  try {
    const keyPath = join(dataDir, KEY_FILE);
    const storedKey = readKeyFile(keyPath);
    const storedDataset = storedKey === undefined ? undefined : service.admin.datasetOfKey(storedKey);
    if (storedKey !== undefined && storedDataset !== undefined) {
      service.admin.setPlan(storedDataset, opts.plan);
      return { baseUrl: service.url, apiKey: storedKey, datasetId: storedDataset, close: service.close };
    }
    const created = service.admin.createDataset({ name: 'embedded', plan: opts.plan, credits: opts.credits ?? EMBEDDED_START_CREDITS });
    const tmp = `${keyPath}.tmp`;
    writeFileSync(tmp, `${created.apiKey}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, keyPath);
    return { baseUrl: service.url, apiKey: created.apiKey, datasetId: created.datasetId, close: service.close };
  } catch (err) {
    await service.close();
    throw err;
  }
}
