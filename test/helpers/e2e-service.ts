import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startService, type RunningService } from '../../src/service/server.js';
import type { Plan } from '../../src/shared/plans.js';

/** One file of `GET /api/v1/ext/files/`, as the service sends it (snake_case, integer ids). */
export type ServiceFile = {
  id: number;
  name: string;
  size: number | null;
  sha256: string | null;
  status: string;
  chunk_count: number | null;
  error?: string | null;
};

/** A dataset of the service under test, read through its own HTTP API (not through kbsync's client). */
export type E2eDataset = {
  datasetId: string;
  apiKey: string;
  /** `credits_remaining` of `GET /api/v1/ext/datasets/`. */
  balance(): Promise<number>;
  /** Every file of the dataset (`GET /api/v1/ext/files/`). */
  files(): Promise<ServiceFile[]>;
};

/** The local service on 127.0.0.1, a random port, in a temp data dir; no rate limit. */
export type E2eService = {
  url: string;
  service: RunningService;
  /** The service's data folder (its database and the files it received). */
  dataDir: string;
  /** A new dataset with its own key. */
  dataset(o?: { plan?: Plan; credits?: number }): E2eDataset;
  close(): Promise<void>;
};

/** Starts the service for an end-to-end suite (call in beforeAll, close in afterAll). */
export async function startE2eService(): Promise<E2eService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbsync-e2e-service-'));
  const service = await startService({ dataDir, host: '127.0.0.1', port: 0 });
  return {
    url: service.url,
    service,
    dataDir,
    dataset: (o = {}) => {
      const { datasetId, apiKey } = service.admin.createDataset({ name: 'e2e', plan: o.plan ?? 'basic', credits: o.credits ?? 100_000 });
      return datasetApi(service.url, datasetId, apiKey);
    },
    close: async () => {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Reads a dataset through the service's API with its key. */
export function datasetApi(url: string, datasetId: string, apiKey: string): E2eDataset {
  const get = async <T>(path: string): Promise<T> => {
    const res = await request(`${url}${path}`, { headers: { 'x-api-key': apiKey } });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET ${path} answered ${res.statusCode}: ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    datasetId,
    apiKey,
    balance: async () =>
      (await get<{ datasets: { credits_remaining: number }[] }>('/api/v1/ext/datasets/')).datasets[0]?.credits_remaining ?? NaN,
    files: async () => (await get<{ files: ServiceFile[] }>('/api/v1/ext/files/?limit=10000')).files,
  };
}
