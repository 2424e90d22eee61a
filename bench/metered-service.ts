import { spawn } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { startService } from '../src/service/server.js';
import { uploadCost, type Plan } from '../src/shared/plans.js';
import { SOURCE_NAME } from './scale-tree.js';

/**
 * The local service (background work off: uploads are charged, stored and answered at once, never parsed)
 * with one dataset of `credits`; prints `{url, apiKey}` as a line on stdout and runs until SIGTERM.
 * Started by firstSync in a process of its own (bench/child.js), so that its memory is not kbsync's.
 */
export async function meteredService(o: { dataDir: string; credits: number; plan: Plan }): Promise<null> {
  const service = await startService({ dataDir: o.dataDir, host: '127.0.0.1', port: 0, background: false });
  const { apiKey } = service.admin.createDataset({ name: 'scale', plan: o.plan, credits: o.credits });
  process.stdout.write(`${JSON.stringify({ url: service.url, apiKey })}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await service.close();
  return null;
}

export type Metered = { url: string; apiKey: string; dataDir: string; stop(): Promise<void> };

/** Starts meteredService in a child process; resolves once it listens. */
export async function startMetered(dataDir: string, credits: number, plan: Plan): Promise<Metered> {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('./child.js', import.meta.url)),
      './metered-service.js',
      'meteredService',
      JSON.stringify({ dataDir, credits, plan }),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const first = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      if (buf.includes('\n')) resolve(buf.slice(0, buf.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`the metered service exited (${code}) before listening`)));
  });
  const { url, apiKey } = JSON.parse(first) as { url: string; apiKey: string };
  return {
    url,
    apiKey,
    dataDir,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What the service holds after the runs, read from its database once it stopped: uploads per name and credits charged. */
export function serviceFacts(dataDir: string): { files: number; names: number; duplicates: number; charged: number } {
  const db = new Database(join(dataDir, 'service.db'), { readonly: true });
  try {
    const f = db.prepare('SELECT COUNT(*) AS files, COUNT(DISTINCT name) AS names FROM files').get() as { files: number; names: number };
    const charged = db.prepare(`SELECT -COALESCE(SUM(delta_credits), 0) AS charged FROM ledger WHERE delta_credits < 0`).get() as {
      charged: number;
    };
    return { files: f.files, names: f.names, duplicates: f.files - f.names, charged: charged.charged };
  } finally {
    db.close();
  }
}

/** The credits of uploading every file of the tree once, from the files' sizes (what a first sync should spend). */
export function treeCredits(tree: string): { files: number; credits: number } {
  let files = 0;
  let credits = 0;
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        files++;
        credits += uploadCost(statSync(p).size);
      }
    }
  };
  walk(tree);
  return { files, credits };
}

/** A kbsync.yaml on the metered service: caps that let the whole first sync through, no pacing. */
export function meteredConfig(
  work: string,
  tree: string,
  svc: Metered,
  credits: number,
  plan: Plan,
): { config: string; statePath: string } {
  const statePath = join(work, 'state', 'state.db');
  const config = join(work, 'kbsync.yaml');
  writeFileSync(
    config,
    `target:\n  kind: remote\n  baseUrl: ${JSON.stringify(svc.url)}\n  apiKey: ${JSON.stringify(svc.apiKey)}\n  plan: ${plan}\n` +
      `state: ${JSON.stringify(statePath)}\n` +
      `budget: { maxCreditsPerRun: ${credits}, maxCreditsPerDay: ${credits}, maxCreditsPerMonth: ${credits} }\n` +
      `upload: { concurrency: 8, requestsPerSecond: 1000 }\n` +
      `sources:\n  - { name: ${SOURCE_NAME}, path: ${JSON.stringify(tree)} }\n`,
  );
  return { config, statePath };
}
