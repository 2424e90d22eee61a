import Database from 'better-sqlite3';
import { join } from 'node:path';
import { request } from 'undici';
import type { CliRun } from '../cli/helpers.js';

/** Helpers of the `kbsync agents` suites: a dataset's API with its key (read back, never through kbsync's client), the state's paid runs. */

export const V1 = '/api/v1/ext';
export const V2 = '/api/v2/ext';

/** A dataset of the service, through its HTTP API. */
export type Api = {
  get<T>(path: string): Promise<T>;
  send(method: 'POST' | 'PUT' | 'PATCH', path: string, body: unknown): Promise<{ status: number; json: unknown }>;
  balance(): Promise<number>;
};

/** An agent as the service sends it. */
export type AgentWire = { id: number; name: string; config: Record<string, unknown>; datasets?: { id: number; mode: string }[] };
/** The API of the dataset `apiKey` belongs to, on the service at `url`. */
export function apiOf(url: string, apiKey: string): Api {
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> => {
    const res = await request(`${url}${path}`, {
      method: method as 'GET',
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
  return {
    get: async <T>(path: string): Promise<T> => {
      const res = await call('GET', path);
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text}`);
      return JSON.parse(res.text) as T;
    },
    send: async (method, path, body) => {
      const res = await call(method, path, body);
      return { status: res.status, json: JSON.parse(res.text) as unknown };
    },
    balance: async () => {
      const res = await call('GET', `${V1}/datasets/`);
      return (JSON.parse(res.text) as { datasets: { credits_remaining: number }[] }).datasets[0]?.credits_remaining ?? NaN;
    },
  };
}

/** The paid calls the state recorded for the agents commands: [command, status, credits], oldest first. */
export function paidRuns(dir: string): [string, string, number | null][] {
  const db = new Database(join(dir, '.kbsync', 'state.db'), { readonly: true });
  try {
    const rows = db
      .prepare(`SELECT command, status, summary_json FROM runs WHERE command LIKE 'agent_%' OR command = 'chat' ORDER BY id`)
      .all() as { command: string; status: string; summary_json: string | null }[];
    return rows.map((r) => [r.command, r.status, (JSON.parse(r.summary_json ?? '{}') as { credits?: number }).credits ?? null]);
  } finally {
    db.close();
  }
}

/** Parses a `--json` output, or fails with what the command printed. */
export function jsonOf<T>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}
