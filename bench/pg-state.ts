/**
 * The PostgreSQL state beside the SQLite state: an unchanged plan of `files` tracked files
 * (the state's part: loading the tracked files, then the planner over them), one state call's cost
 * (the worker-thread hop, docs/architecture.md), and reservations per second with 8 processes on one
 * PostgreSQL state beside 1 process on a SQLite state. Runs alone: `node .bench-build/bench/child.js
 * ./pg-state.js runPgStateBench '{"files":100000}'` after `tsc -p tsconfig.bench.json`.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { planSync } from '../src/sync/planner/plan-sync.js';
import { openState, type StateStore, type TrackedFileInput } from '../src/sync/state/index.js';
import type { ObservedFile } from '../src/sync/types.js';
import { startPostgres } from '../test/helpers/postgres-server.js';

export type PgStateBenchResult = {
  files: number;
  plan: { sqliteMs: number; postgresMs: number; sqliteLoadMs: number; postgresLoadMs: number };
  call: { sqliteUs: number; postgresUs: number };
  reservations: { sqlitePerSec: number; postgresPerSec: number; postgresProcesses: number; seconds: number };
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};
const round = (x: number, digits = 1): number => Math.round(x * 10 ** digits) / 10 ** digits;
const sha = (i: number): string => createHash('sha256').update(String(i)).digest('hex');
const NO_CAPS = { run: Number.MAX_SAFE_INTEGER, day: Number.MAX_SAFE_INTEGER, month: Number.MAX_SAFE_INTEGER };

function trackedRows(files: number): TrackedFileInput[] {
  return Array.from({ length: files }, (_, i) => ({
    source: 'docs',
    path: `dir${i % 100}/sub${(i >> 7) % 50}/file-${i}.md`,
    size: 2000 + (i % 5000),
    mtimeNs: `17000000000${i}`,
    inode: i,
    sha256: sha(i),
    remoteName: `dir${i % 100}/sub${(i >> 7) % 50}/file-${i}.md`,
    remoteId: String(i + 1),
    remoteStatus: 'processed',
    reprocessAttempts: 0,
    lastAction: 'upload',
    lastReason: 'new file',
  }));
}

/** The state's part of an unchanged plan: load every tracked file, plan them against an observation that matches. */
function timePlan(store: StateStore, observed: ObservedFile[]): { planMs: number; loadMs: number } {
  const t0 = performance.now();
  const tracked = store.loadTrackedFiles();
  const t1 = performance.now();
  const plan = planSync({
    observation: { files: observed, skipped: [], sources: [{ name: 'docs', kind: 'folder', root: '/data', commit: null, scope: null }] },
    tracked,
    remote: null,
    plan: 'pro',
    limits: { maxFileBytes: null },
    budget: { caps: NO_CAPS, used: { run: 0, day: 0, month: 0 } },
    reindexMinChangedFiles: 20,
    maxReprocessAttempts: 2,
    multiSource: false,
    now: new Date(0),
  });
  const t2 = performance.now();
  if (plan.totals.unchanged !== observed.length) throw new Error(`the bench plan is not unchanged: ${JSON.stringify(plan.totals)}`);
  return { planMs: t2 - t0, loadMs: t1 - t0 };
}

/**
 * timePlan on both stores, alternated (each round rotates which goes first) so that a machine whose
 * load changes during the bench moves both: medians of `runs` rounds after an untimed one.
 */
function timePlans(stores: Record<'sqlite' | 'postgres', StateStore>, observed: ObservedFile[], runs: number) {
  const times = { sqlite: { plans: [] as number[], loads: [] as number[] }, postgres: { plans: [] as number[], loads: [] as number[] } };
  for (let r = 0; r < runs + 1; r++) {
    const order = r % 2 === 0 ? (['sqlite', 'postgres'] as const) : (['postgres', 'sqlite'] as const);
    for (const name of order) {
      const t = timePlan(stores[name], observed);
      if (r === 0) continue;
      times[name].plans.push(t.planMs);
      times[name].loads.push(t.loadMs);
    }
  }
  const of = (name: 'sqlite' | 'postgres') => ({ planMs: round(median(times[name].plans)), loadMs: round(median(times[name].loads)) });
  return { sqlite: of('sqlite'), postgres: of('postgres') };
}

function timeCall(store: StateStore, calls: number): number {
  store.setMeta('bench', 'x');
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) store.getMeta('bench');
  return round(((performance.now() - t0) * 1000) / calls, 1);
}

/** One process's loop (run in children): enqueue, reserve, settle done, for `seconds`; how many it admitted. */
export function reserveLoop(o: { where: string; seconds: number; scope: string }): { count: number } {
  const store = openState(o.where, { scope: o.scope, busyTimeoutMs: 30_000 });
  try {
    const run = store.startRun('sync');
    const until = performance.now() + o.seconds * 1000;
    let count = 0;
    while (performance.now() < until) {
      const id = store.enqueue({
        kind: 'upload',
        source: o.scope,
        path: `${count}.md`,
        sha256: sha(count * 1000 + process.pid),
        size: 1,
        mtimeNs: '1',
        inode: count,
        remoteName: `${o.scope}/${count}.md`,
        credits: 5,
        runId: run,
      });
      if (!store.reserve(id, NO_CAPS, run).ok) throw new Error('refused with no cap');
      store.settle(id, { outcome: 'done', creditsCharged: 5, remoteId: `${o.scope}-${count}` });
      count++;
    }
    store.finishRun(run, 'done', null);
    return { count };
  } finally {
    store.close();
  }
}

/** `n` processes running reserveLoop on `where` at once; admitted reservations per second, all together. */
async function reservationsPerSecond(where: string, n: number, seconds: number): Promise<number> {
  const child = fileURLToPath(new URL('./child.js', import.meta.url));
  const counts = await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const p = spawn(process.execPath, [child, './pg-state.js', 'reserveLoop', JSON.stringify({ where, seconds, scope: `p${i}` })], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      p.stdout.on('data', (c: Buffer) => (out += c.toString()));
      return new Promise<number>((resolve, reject) =>
        p.once('close', (code) => (code === 0 ? resolve((JSON.parse(out) as { count: number }).count) : reject(new Error(`exit ${code}`)))),
      );
    }),
  );
  return round(counts.reduce((a, b) => a + b, 0) / seconds, 0);
}

export async function runPgStateBench(o: { files?: number; runs?: number; seconds?: number; log?: (line: string) => void } = {}) {
  const files = o.files ?? 100_000;
  const runs = o.runs ?? 9;
  const seconds = o.seconds ?? 5;
  const log = o.log ?? (() => {});
  const server = await startPostgres({ durable: true });
  const dir = mkdtempSync(join(tmpdir(), 'kbsync-bench-pg-'));
  try {
    const admin = new pg.Client({ connectionString: `${server.url}/postgres` });
    await admin.connect();
    for (const db of ['plan', 'reserve']) await admin.query(`CREATE DATABASE ${db}`);
    await admin.end();
    const rows = trackedRows(files);
    const observed: ObservedFile[] = rows
      .map((r) => ({
        source: r.source,
        path: r.path,
        absPath: `/data/${r.path}`,
        size: r.size,
        mtimeNs: r.mtimeNs,
        inode: r.inode,
        sha256: r.sha256,
      }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const stores = {
      sqlite: openState(join(dir, 'plan.db'), { scope: 'docs' }),
      postgres: openState(`${server.url}/plan`, { scope: 'docs' }),
    };
    const result: PgStateBenchResult = {
      files,
      plan: { sqliteMs: 0, postgresMs: 0, sqliteLoadMs: 0, postgresLoadMs: 0 },
      call: { sqliteUs: 0, postgresUs: 0 },
      reservations: { sqlitePerSec: 0, postgresPerSec: 0, postgresProcesses: 8, seconds },
    };
    try {
      for (const [name, store] of Object.entries(stores)) {
        log(`seeding ${files} tracked files into ${name}`);
        for (let i = 0; i < rows.length; i += 10_000) store.upsertTrackedMany(rows.slice(i, i + 10_000));
      }
      const { sqlite: s, postgres: p } = timePlans(stores, observed, runs);
      result.plan = { sqliteMs: s.planMs, postgresMs: p.planMs, sqliteLoadMs: s.loadMs, postgresLoadMs: p.loadMs };
      log(`unchanged plan: sqlite ${s.planMs} ms, postgres ${p.planMs} ms`);
      result.call = { sqliteUs: timeCall(stores.sqlite, 20_000), postgresUs: timeCall(stores.postgres, 5_000) };
      log(`one call: sqlite ${result.call.sqliteUs} µs, postgres ${result.call.postgresUs} µs`);
    } finally {
      for (const store of Object.values(stores)) store.close();
    }
    result.reservations.sqlitePerSec = await reservationsPerSecond(join(dir, 'reserve.db'), 1, seconds);
    result.reservations.postgresPerSec = await reservationsPerSecond(`${server.url}/reserve`, 8, seconds);
    log(`reservations/s: sqlite 1 process ${result.reservations.sqlitePerSec}, postgres 8 processes ${result.reservations.postgresPerSec}`);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.stop();
  }
}
