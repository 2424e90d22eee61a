import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { createTempDirs } from '../helpers/e2e-workspace.js';
import { until } from '../helpers/until.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/service/server.js';
import type { Plan } from '../../src/shared/plans.js';

/**
 * A new agent on `api`'s dataset, as the service creates it (read_only) or switched to self_learning (it
 * may write intelligence entries). Returns its id; throws when the service refuses either call.
 */
export async function newAgent(api: Api, mode: 'self_learning' | 'read_only' = 'self_learning'): Promise<number> {
  const created = await api.call('POST', '/api/v1/ext/agents/', { json: { name: 'helper' } });
  if (created.status !== 201) throw new Error(`creating an agent: ${created.status} ${created.text}`);
  const id = created.body.id as number;
  if (mode === 'self_learning') {
    const patched = await api.call('PATCH', `/api/v2/ext/agents/${id}/datasets/${api.datasetId}`, { json: { mode } });
    if (patched.status !== 200 || patched.body.mode !== mode)
      throw new Error(`switching agent ${id} to ${mode}: ${patched.status} ${patched.text}`);
  }
  return id;
}

/** A temp folder removed by the returned cleanup. */
export function tempDir(prefix = 'kbsync-service-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export type Harness = {
  service: RunningService;
  dataDir: string;
  /** Restarts the service on the same data dir (new port). */
  restart(extra?: Partial<ServiceOptions>): Promise<void>;
  close(): Promise<void>;
};

/** Starts the service on 127.0.0.1:0 in a fresh temp data dir. */
export async function startHarness(extra: Partial<ServiceOptions> = {}): Promise<Harness> {
  const dir = tempDir();
  let service = await startService({ dataDir: dir.path, host: '127.0.0.1', port: 0, ...extra });
  const harness: Harness = {
    get service() {
      return service;
    },
    dataDir: dir.path,
    async restart(more = {}) {
      await service.close();
      service = await startService({ dataDir: dir.path, host: '127.0.0.1', port: 0, ...extra, ...more });
    },
    async close() {
      await service.close();
      dir.cleanup();
    },
  };
  return harness;
}

export type Api = {
  key: string;
  datasetId: string;
  call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, opts?: CallOptions): Promise<Reply>;
};
export type CallOptions = {
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  noAuth?: boolean;
};
// Tests read arbitrary JSON answers field by field; `any` keeps them short (assertions check the shapes).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: any; text: string };

/** Sends one request and reads the whole answer (JSON parsed when it is JSON). */
export async function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer | NodeJS.ReadableStream,
): Promise<Reply> {
  const res = await request(url, { method: method as 'GET', headers, body: body as string | undefined });
  const text = await res.body.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text };
}

/** A dataset with a key, and a caller bound to them. */
export function apiFor(harness: Harness, d: { plan?: Plan; credits?: number; name?: string } = {}): Api {
  const { datasetId, apiKey } = harness.service.admin.createDataset({
    name: d.name ?? 'test',
    plan: d.plan ?? 'pro',
    credits: d.credits ?? 1000,
  });
  return bindApi(harness, datasetId, apiKey);
}

/** A caller for an existing key. */
export function bindApi(harness: Harness, datasetId: string, key: string): Api {
  return {
    key,
    datasetId,
    call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.noAuth === true ? {} : { 'x-api-key': key }), ...opts.headers };
      if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
      let body: string | Buffer | undefined = opts.body;
      if (opts.json !== undefined) {
        body = JSON.stringify(opts.json);
        headers['content-type'] ??= 'application/json';
      }
      return send(`${harness.service.url}${path}`, method, headers, body);
    },
  };
}

/** The balance as the API reports it. */
export async function credits(api: Api): Promise<number> {
  const res = await api.call('GET', '/api/v1/ext/datasets/');
  return res.body.datasets[0].credits_remaining as number;
}

/** A multipart/form-data body with one file part. */
export function multipartBody(fields: { name: string; content: string | Buffer; field?: string }): { body: Buffer; contentType: string } {
  const boundary = `----kbsync${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${fields.field ?? 'file'}"; filename="${fields.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, Buffer.from(fields.content), tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Uploads one file through the API. */
export function upload(
  api: Api,
  name: string,
  content: string | Buffer,
  opts: { idempotencyKey?: string; field?: string } = {},
): Promise<Reply> {
  const { body, contentType } = multipartBody({ name, content, field: opts.field });
  return api.call('POST', '/api/v1/ext/files/upload', {
    body,
    headers: { 'content-type': contentType },
    idempotencyKey: opts.idempotencyKey,
  });
}

/** `until` (test/helpers/until.ts) for the service's background processing: the value `check` finds. */
export function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  return until('the service to reach the condition', check, timeoutMs);
}

/**
 * For a test file: a local service started before its tests and closed after them, and temp folders
 * removed after them. `harness()` is the service (from the first test on).
 */
export function useHarness(): { harness: () => Harness; temp: ReturnType<typeof createTempDirs> } {
  let h: Harness | undefined;
  const temp = createTempDirs();
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
    temp.cleanup();
  });
  return {
    harness: () => {
      if (h === undefined) throw new Error('useHarness: the service starts before the first test');
      return h;
    },
    temp,
  };
}
